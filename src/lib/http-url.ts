// The one rule for URLs that pages render as links or images (a reader's avatarUrl, a discussion's
// url): http(s) only, at most 2048 chars, no control characters. So `javascript:`, `data:` and the
// like never reach an href or an <img> src, whoever shows them.

/** At most this long. */
export const MAX_HTTP_URL_LENGTH = 2048;

/** What the rule says, for problem documents. */
export const HTTP_URL_RULE = `must be an http(s) URL of at most ${MAX_HTTP_URL_LENGTH} chars`;

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function isHttpUrl(v: unknown): v is string {
  if (typeof v !== "string" || v.length > MAX_HTTP_URL_LENGTH || CONTROL.test(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}
