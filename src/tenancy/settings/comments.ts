// Comments: moderation before or after publication, the edit window, the body's length, the kinds of
// reaction on comments and on the discussion itself (contract sections 9 and 18).
import { z } from "zod";
import { setting } from "./define.js";
import { noRepeats, reactionKind } from "./rules.js";

export const commentsSettings = {
  moderation: setting(z.enum(["post", "pre"]), {
    default: "post",
    enumType: { name: "Moderation" },
    label: "Moderation",
    help: "Post: comments appear at once, moderators remove what breaks the rules. Pre: each waits for approval.",
  }),
  editWindowSeconds: setting(z.number().int().min(0).max(31_536_000), {
    default: 900,
    label: "Edit window (seconds, 0 = no limit)",
    help: "How long after posting an author may still edit their comment.",
  }),
  reactionKinds: setting(z.array(reactionKind).min(1).max(32).refine(noRepeats, "must not repeat a kind"), {
    default: ["like", "love", "laugh", "wow", "sad", "angry"],
    label: "Reaction kinds (comma-separated)",
    help: "The reactions readers may add, such as like, love: lower-case letters, digits and _.",
  }),
  maxBodyLength: setting(z.number().int().min(1).max(10_000), {
    default: 10_000,
    label: "Maximum body length (characters)",
    help: "Longer comments are refused; at most 10,000.",
  }),
  /** reactions on the discussion itself (contract section 18); [] (the default): off */
  pageReactionKinds: setting(z.array(reactionKind).max(32).refine(noRepeats, "must not repeat a kind"), {
    default: [],
    description: "The kinds of reaction readers may leave on a discussion itself (page reactions); [] (default): off.",
    patchDescription: "The whole list (at most 32); [] turns page reactions off.",
    label: "Page reaction kinds (comma-separated)",
    help: "Such as up, heart: lower-case letters, digits and _; at most 32.",
  }),
};
