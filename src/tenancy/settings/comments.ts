// Comments: moderation before or after publication, the edit window, the body's length, the kinds of
// reaction on comments and on the discussion itself (contract sections 9 and 18).
import { z } from "zod";
import { setting } from "./define.js";
import { noRepeats, reactionKind } from "./rules.js";

export const commentsSettings = {
  moderation: setting(z.enum(["post", "pre"]), { default: "post", enumType: { name: "Moderation" } }),
  editWindowSeconds: setting(z.number().int().min(0).max(31_536_000), { default: 900 }),
  reactionKinds: setting(z.array(reactionKind).min(1).max(32).refine(noRepeats, "must not repeat a kind"), {
    default: ["like", "love", "laugh", "wow", "sad", "angry"],
  }),
  maxBodyLength: setting(z.number().int().min(1).max(10_000), { default: 10_000 }),
  /** reactions on the discussion itself (contract section 18); [] (the default): off */
  pageReactionKinds: setting(z.array(reactionKind).max(32).refine(noRepeats, "must not repeat a kind"), {
    default: [],
    description: "The kinds of reaction readers may leave on a discussion itself (page reactions); [] (default): off.",
    patchDescription: "The whole list (at most 32); [] turns page reactions off.",
  }),
};
