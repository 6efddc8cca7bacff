// The image a fediverse actor shows as its avatar (settings federation.icon): an https URL, parsed
// here into what is used of it — the URL the parser prints and the media type its file name says —
// so a tenant's text reaches no library whole.
import { MAX_HTTP_URL_LENGTH } from "./http-url.js";

/** What a refused icon is told. */
export const ACTOR_ICON_RULE = `must be an https URL of an image (at most ${MAX_HTTP_URL_LENGTH} characters, no credentials or fragment)`;

const MEDIA_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
};

export interface ActorIcon {
  /** the URL as the parser prints it */
  href: string;
  /** the media type its file name's extension names, else null */
  mediaType: string | null;
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0020\u007f]/;

/** `raw` as an icon, or null when it is not an https URL without credentials or fragment. */
export function actorIconOf(raw: string): ActorIcon | null {
  if (raw.length === 0 || raw.length > MAX_HTTP_URL_LENGTH || CONTROL.test(raw)) return null;
  const u = URL.parse(raw);
  if (!u || u.protocol !== "https:" || !u.hostname || u.username || u.password || u.hash || raw.includes("#")) return null;
  const ext = /\.([a-z0-9]{1,5})$/i.exec(u.pathname)?.[1]?.toLowerCase();
  return { href: u.href, mediaType: (ext && MEDIA_TYPES[ext]) ?? null };
}
