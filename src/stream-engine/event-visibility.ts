// Who sees which event on a stream (audiences: src/events/types.ts; contract section 4 "Stream").
import type { Audience } from "../events/types.js";

export interface Viewer {
  /** the stream's key (or the key that minted its ticket) holds moderate_content */
  moderator: boolean;
  /** the reader the stream is bound to (ticket minted with an identity, or X-Service-Identity) */
  readerId: string | null;
}

export function canSee(viewer: Viewer, event: { audience: Audience; readerId: string | null }): boolean {
  switch (event.audience) {
    case "all":
      return true;
    case "moderators":
      return viewer.moderator;
    case "reader":
      return viewer.readerId !== null && event.readerId === viewer.readerId;
    default:
      return false;
  }
}
