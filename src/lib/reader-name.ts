// A reader's name and id, wherever one comes from (an assertion, a provider's token, a hosted sign-in,
// PATCH /me): text without control characters — PostgreSQL text cannot hold NUL, and no name needs
// a line break — a name of 1–200 characters.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export const READER_NAME_MAX = 200;
export const READER_NAME_RULE = `must be 1–${READER_NAME_MAX} characters without control characters`;

/** Whether `v` is a reader's name as it stands (not trimmed: callers that trim do so first). */
export const isReaderName = (v: unknown): v is string =>
  typeof v === "string" && v.length > 0 && v.length <= READER_NAME_MAX && !CONTROL_CHARS.test(v);

/** A name another network gives (an actor's, a Bluesky account's): control characters as spaces, trimmed, cut to READER_NAME_MAX. */
export const cleanRemoteName = (s: string): string =>
  [...s.replace(new RegExp(CONTROL_CHARS.source, "g"), " ").trim()].slice(0, READER_NAME_MAX).join("");
