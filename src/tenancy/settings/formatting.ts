// What readers see and do with a comment's body: how it is rendered (contract section 18;
// src/lib/markdown.ts), and votes on comments.
import { z } from "zod";
import { group, setting } from "./define.js";

/** What readers may vote: nothing, upvotes, or upvotes and downvotes. */
export const VOTE_MODES = ["off", "up", "updown"] as const;
export type VoteMode = (typeof VOTE_MODES)[number];

/** How comment bodies are rendered (contract section 18; src/lib/markdown.ts). */
export const FormattingSchema = group(
  { name: "FormattingSettings", description: "How comment bodies are rendered to bodyHtml (contract section 18; docs/choices.md)." },
  {
    /** Markdown (CommonMark, strikethrough, autolinks); false: plain text */
    markdown: setting(z.boolean(), {
      default: true,
      description: "Markdown: CommonMark with strikethrough and autolinks, raw HTML shown as text (default true); false: plain text.",
      label: "Comments are Markdown",
      help: "Emphasis, links, lists, quotes and code, rendered and sanitized by the service; unticked, bodies show as plain text. Bodies already written keep how they were rendered.",
    }),
    /** images (https only) in Markdown bodies */
    images: setting(z.boolean(), {
      default: false,
      description: "Images in Markdown bodies, https only (default false).",
      label: "Show images in comments (https only)",
      help: "Markdown images from https addresses; otherwise an image shows as its link.",
    }),
  },
);

export const formattingSettings = { formatting: FormattingSchema };

export const votesSettings = {
  /** votes on comments (contract section 18): off, upvotes only, or up and down */
  votes: setting(z.enum(VOTE_MODES), {
    default: "off",
    enumType: { name: "VoteMode", description: "Votes on comments: off (default), up (upvotes only) or updown (upvotes and downvotes)." },
    label: "Votes on comments",
    help: "Readers vote a comment up (and, with downvotes, down); the thread can then sort by best or score.",
  }),
};
