// Discussions locked by age (contract section 21): the auto-close job locks them.
import { z } from "zod";
import { setting } from "./define.js";

export const autoCloseSettings = {
  /** discussions this many days old (from their creation) are locked by the auto-close job; 0: never */
  autoLockAfterDays: setting(z.number().int().min(0).max(36_500), {
    default: 0,
    description: "Discussions this many days old (from their creation) are locked within a minute of it; 0 (default): never.",
    patchDescription: "0..36500; 0 turns auto-close off.",
    label: "Close discussions after (days, 0 = never)",
    help: "A discussion this old (from its creation) is locked within a minute: it can be read, not commented on.",
  }),
};
