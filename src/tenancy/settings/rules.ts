// Rules more than one section's settings use: an origin, a word list, an outbound URL, a reaction
// kind, a list's unique ids.
import { z } from "zod";
import { originOf } from "../../lib/origin.js";
import { isHttpUrl, HTTP_URL_RULE } from "../../lib/http-url.js";
import { parseOutboundUrl, type OutboundKind } from "../../lib/outbound-url.js";
import { createWordNormalizer, entryProblem, type WordNormalizer } from "../../lib/word-matcher.js";

/** An origin as a browser sends it: http(s)://host[:port], nothing else. */
export const origin = z
  .string()
  .refine(
    (v) => originOf(v) === v,
    "must be an origin such as https://news.example (scheme, host and optional port; no path or trailing slash)",
  );

/** A safety word list: up to 2,000 entries, each with a letter or digit once normalised (src/lib/word-matcher.ts). */
export const wordList = () =>
  z
    .array(z.string().min(1, "must not be empty").max(100, "must be at most 100 characters"))
    .max(2000)
    .superRefine((entries, ctx) => {
      let normalizer: WordNormalizer | undefined; // made (7 ms: obscenity's tables) only for an entry that is not one plain word
      entries.forEach((entry, i) => {
        const problem = entry ? entryProblem(() => (normalizer ??= createWordNormalizer()), entry) : null; // an empty one is refused above
        if (problem) ctx.addIssue({ code: "custom", message: problem, path: [i] });
      });
    });

/**
 * A URL the service reaches out to (src/lib/outbound-url.ts): refused, naming the part, when it holds
 * anything beyond what the service uses of it (a query or path on an SMTP URL, credentials, a fragment).
 */
export function outboundUrl(kind: OutboundKind) {
  return z
    .string()
    .max(2048)
    .superRefine((v, ctx) => {
      const parsed = parseOutboundUrl(v, kind);
      if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem.message });
      else if (kind !== "smtp" && !isHttpUrl(v)) ctx.addIssue({ code: "custom", message: HTTP_URL_RULE });
    });
}

/** An http(s) URL (a sign-in provider's endpoints, Akismet's blog). */
export const httpUrl = () => z.string().max(2048).refine(isHttpUrl, HTTP_URL_RULE);

/** A reaction kind: a vote's reaction_toggled event says kind "vote" (contract section 18), so no reaction is called that. */
export const reactionKind = z
  .string()
  .regex(/^[a-z0-9_]{1,32}$/, "must be 1–32 chars of a-z, 0-9, _")
  .refine((k) => k !== "vote", '"vote" is the kind of votes\' events, not a reaction kind');

export const uniqueIds = (a: readonly { id: string }[]) => new Set(a.map((p) => p.id)).size === a.length;

/** A list with no value twice. */
export const noRepeats = (a: readonly unknown[]) => new Set(a).size === a.length;
