// What screening (screening.ts) judges: the comment posted or edited, as the steps that ask outside it
// see it. Its own file so that those steps' modules (the moderation hook: src/modules/moderation-hook/check.ts)
// take it without importing the list that calls them: screening.ts imports them, they import this.
import type { ReaderIdentity } from "../../auth/identity.js";
import type { RenderedBody } from "../../lib/markdown.js";

export type ScreeningAction = "post" | "edit";

/**
 * The comment screened: the body as written (the hook and Akismet get it) and as rendered (the rules
 * read it; the hook gets it too). The moderation hook is asked about this same subject (askHook); its
 * wire calls a `post` `create` (src/modules/moderation-hook/check.ts, buildCheck).
 */
export type ScreeningSubject =
  | {
      action: "post";
      commentId: string;
      discussionId: string;
      parentId: string | null;
      body: string;
      rendered: RenderedBody;
      reader: ReaderIdentity;
    }
  | { action: "edit"; commentId: string; body: string; rendered: RenderedBody; reader: ReaderIdentity };
