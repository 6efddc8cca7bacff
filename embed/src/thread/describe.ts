// A failure as a reader reads it: the service's stable codes (src/lib/errors.ts) in the element's
// words, the service's own words when there are none of ours; and what is wrong with a draft before
// it is sent.
import { ServiceError } from "./api.js";
import { fill, type StringKey, type Strings } from "./i18n.js";

const OWN: Partial<Record<string, StringKey>> = {
  discussion_locked: "err_discussion_locked",
  discussion_archived: "err_discussion_archived",
  rate_limited: "err_rate_limited",
  edit_window_closed: "err_edit_window_closed",
  not_author: "err_not_author",
  not_found: "err_not_found",
  network: "err_network",
  votes_disabled: "err_votes_disabled",
};

/** The message for a failure; an identity the service refuses also asks the host page to sign the reader in. */
export function describeFailure(e: unknown, t: Strings, locale: string, requestSignIn: () => void): string {
  if (!(e instanceof ServiceError)) return t.err_network;
  if (e.code === "reader_banned") {
    const until = typeof e.extensions.until === "string" ? new Date(e.extensions.until) : null;
    return until
      ? fill(t.err_reader_suspended, { until: until.toLocaleString(locale, { dateStyle: "medium", timeStyle: "short" }) })
      : t.err_reader_banned;
  }
  if (e.code === "origin_not_allowed") {
    const origin = typeof e.extensions.origin === "string" ? e.extensions.origin : location.origin;
    return fill(t.err_origin_not_allowed, { origin });
  }
  if (e.code === "invalid_identity") {
    requestSignIn();
    return t.err_invalid_identity;
  }
  // a comment's discussion that does not exist (and that this page may not create)
  if (e.code === "not_found" && e.extensions.resource === "discussion") return t.err_discussion_missing;
  if (e.code === "validation_failed") {
    const first = (e.extensions.errors as { message?: string }[] | undefined)?.[0]?.message;
    return fill(t.err_generic, { detail: first ?? e.message });
  }
  const key = OWN[e.code];
  return key ? t[key] : fill(t.err_generic, { detail: e.message });
}

/** What is wrong with a draft before it is sent (the service judges it again): empty or too long; null: nothing. */
export function draftProblem(body: string, maxBodyLength: number, t: Strings): string | null {
  if (!body) return t.err_empty;
  if (body.length > maxBodyLength) return fill(t.err_too_long, { n: maxBodyLength });
  return null;
}
