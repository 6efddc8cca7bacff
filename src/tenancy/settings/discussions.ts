// Pages: the discussions a page brings into being, and the browser origins whose pages may call the
// browser-facing surface (contract section 7; docs/embed.md).
import { z } from "zod";
import { group, setting } from "./define.js";
import { noRepeats, origin } from "./rules.js";

export const discussionsSettings = {
  /**
   * discussions a page brings into being: a reader's first comment through a publishable key, from
   * one of `allowedOrigins`, creates the discussion with the page's URL and title (docs/embed.md);
   * at most `autoCreatePerMinute` per origin
   */
  discussions: group(
    { name: "DiscussionsSettings" },
    {
      autoCreate: setting(z.boolean(), {
        default: true,
        description:
          "A reader's first comment through a publishable key, from one of allowedOrigins, creates a discussion that does not exist yet, with the page's URL and title (default true).",
      }),
      autoCreatePerMinute: setting(z.number().int().min(1).max(10_000), {
        default: 30,
        description: "Discussions a page's origin may create that way per minute (default 30, 1–10000); past it 429.",
      }),
    },
  ),
  /** browser origins (scheme://host[:port]) whose pages may call the browser-facing surface (contract section 7) */
  allowedOrigins: setting(z.array(origin).max(100).refine(noRepeats, "must not repeat an origin"), {
    default: [],
    description: "Browser origins whose pages may use publishable keys and tickets (CORS).",
    label: "Allowed origins (one per line)",
    help: "The sites whose pages may show your comments with a publishable key, such as https://news.example (scheme, host, port).",
  }),
};
