// What the console may put in an href it did not build itself: http(s) URLs only (the server's rule
// for a discussion's url and a reader's avatarUrl, src/lib/http-url.ts). A value stored before that
// rule existed, such as `javascript:alert(1)`, is shown as text, never as a link.

/** The URL when it is an absolute http(s) URL, else null. */
export function httpHref(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}
