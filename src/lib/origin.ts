// A browser origin (scheme://host[:port]) as the Origin header carries it.

/** The origin of an http(s) URL, or null for anything else. */
export function originOf(raw: string): string | null {
  try {
    const u = new URL(raw.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}
