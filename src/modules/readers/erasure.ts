// Erasing a reader (contract section 13, docs/privacy.md). Batched so that no discussion is held for
// long: each discussion the reader wrote or reacted in (on a comment or on the page) is worked
// through in statements of at most ERASURE_BATCH of their comments (eng_erase_reader_batch, one
// statement under that discussion's lock, like every write), which anonymize or remove them with the
// comment_deleted event a deletion appends and scrub the events that carried them, and the last of
// which removes their reactions there and fixes the counts; then one statement without any discussion lock
// (eng_erase_reader_rest) scrubs the rest of the event log, removes their reports, stream tickets,
// kept Idempotency-Key answers, mail (queued or sent) and their profile, and for a fediverse reader
// (`ap:…`) the tenant's rows of their actor in the same statement; after its commit, the server's cache
// of that actor (src/modules/federation/erasure.ts).
// Running it again finds nothing left to do.
//
// Under an Idempotency-Key it is idempotent by its outcome, not by replay: its statements record
// nothing for the key (they run without the request's claim), so a retry of an erasure that died
// midway (a crash at any batch, on any instance, once the claim's lease lets the retry take the key
// over: src/idempotency/records.ts) runs it again and erases what is left, rather than taking the
// results the dead run's batches recorded as those of the batches it now runs. The key keeps an answer
// only when the whole erasure has finished (finishIdempotent in src/http/idempotency.ts, after this
// returns); a refusal or failure midway keeps nothing. The answer of such a retry is its own run's,
// so it carries no Idempotent-Replayed header (nor does any part of it come from recorded results);
// a repeat after the answer was kept gets that answer with Idempotent-Replayed: true. A request whose
// key was taken over while it still ran keeps erasing too: the same outcome, harmless.
import { renderBody } from "../../lib/markdown.js";
import { requirePrincipal, loadTenant, tenantIdOf, type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { recordAudit } from "../audit/audit.js";
import { FORGET_ACTOR_ROWS, forgetCachedRemoteActor, remoteActorOf } from "../federation/erasure.js";
import { FORGET_BLUESKY_ROWS } from "../bluesky/erasure.js";

/** The body an anonymized comment keeps. */
export const ERASED_BODY = "[erased]";
/** its bodyHtml: the marker as plain text renders it (src/lib/markdown.ts) */
const ERASED_BODY_HTML = renderBody(ERASED_BODY, { markdown: false, images: false }).html;
/** How many of a reader's comments one statement erases (one discussion locked meanwhile), unless the runtime says otherwise. */
export const ERASURE_BATCH = 500;

export interface ReaderErasure {
  readerId: string;
  mode: "anonymize" | "delete";
  /** comments kept with the body replaced and no author */
  commentsAnonymized: number;
  /** comments removed */
  commentsDeleted: number;
  /** comments removed but kept as a tombstone (status deleted, no body, no author) because replies hang under them */
  commentsTombstoned: number;
  /** on comments and on discussions (page reactions) */
  reactionsRemoved: number;
  votesRemoved: number;
  reportsRemoved: number;
  eventsScrubbed: number;
  /** whether a profile was held (false: erased already, or never seen) */
  profileRemoved: boolean;
}

const DISCUSSIONS = `SELECT DISTINCT discussion_id AS id FROM comments WHERE tenant_id = $1 AND author_id = $2
  UNION SELECT DISTINCT c.discussion_id FROM reactions r JOIN comments c ON c.tenant_id = r.tenant_id AND c.id = r.comment_id
         WHERE r.tenant_id = $1 AND r.reader_id = $2
  UNION SELECT DISTINCT discussion_id FROM page_reactions WHERE tenant_id = $1 AND reader_id = $2
  UNION SELECT DISTINCT c.discussion_id FROM votes v JOIN comments c ON c.tenant_id = v.tenant_id AND c.id = v.comment_id
         WHERE v.tenant_id = $1 AND v.reader_id = $2
  ORDER BY id`;

export function checkReaderId(readerId: string): void {
  if (readerId.length === 0 || readerId.length > 255) {
    throw errors.validation([{ path: "id", message: "must be a reader id of 1–255 characters" }]);
  }
}

/** Erases everything held about the reader; `self`: the reader asked, with their own identity. */
export async function eraseReader(ctx: RequestContext, readerId: string, opts: { self: boolean }): Promise<ReaderErasure> {
  requirePrincipal(ctx);
  checkReaderId(readerId);
  const tenantId = tenantIdOf(ctx);
  const mode = resolveSettings((await loadTenant(ctx)).settings).privacy.erasure;
  const out: ReaderErasure = {
    readerId,
    mode,
    commentsAnonymized: 0,
    commentsDeleted: 0,
    commentsTombstoned: 0,
    reactionsRemoved: 0,
    votesRemoved: 0,
    reportsRemoved: 0,
    eventsScrubbed: 0,
    profileRemoved: false,
  };
  // the request without its Idempotency-Key: nothing recorded, nothing replayed
  const unrecorded = store({ ...ctx, idempotency: undefined });
  const discussions = await store(ctx).sql.query<{ id: string }>(DISCUSSIONS, [readerId], "reader_erase_discussions");
  for (const { id } of discussions) {
    for (;;) {
      const b = await unrecorded.write("eng_erase_reader_batch", {
        reader: readerId,
        discussion: id,
        delete: mode === "delete",
        marker: ERASED_BODY,
        markerHtml: ERASED_BODY_HTML,
        limit: ctx.app.erasure.batchSize,
        at: ctx.app.clock.now(),
      });
      out.commentsAnonymized += b.anonymized;
      out.commentsDeleted += b.removed;
      out.commentsTombstoned += b.tombstones;
      out.reactionsRemoved += b.reactions;
      out.votesRemoved += b.votes;
      out.eventsScrubbed += b.eventsScrubbed;
      if (b.done) break;
    }
  }
  // one statement, one transaction: the rest and a fediverse reader's rows of their actor (their remote
  // objects and follow: src/modules/federation/erasure.ts), and a Bluesky reader's reply rows made
  // anonymous (src/modules/bluesky/erasure.ts), go together or not at all
  const [rest] = await store(ctx).sql.query<{ r: { eventsScrubbed: number; reports: number; profile: boolean } }>(
    `${FORGET_ACTOR_ROWS}, ${FORGET_BLUESKY_ROWS} SELECT eng_erase_reader_rest($1, $2) AS r`,
    [readerId, remoteActorOf(readerId)],
    "reader_erase_rest",
  );
  // after its commit: the server's cache of their actor (not the tenant's rows)
  await forgetCachedRemoteActor(ctx, readerId);
  ctx.app.readerAddresses.forget(tenantId, readerId);
  out.eventsScrubbed += rest?.r.eventsScrubbed ?? 0;
  out.reportsRemoved = rest?.r.reports ?? 0;
  out.profileRemoved = rest?.r.profile ?? false;
  // the audit keeps the reader's id and what was done, none of their data
  const { readerId: _id, ...counts } = out;
  await recordAudit(ctx, "reader.erase", { type: "reader", id: readerId }, { ...counts, self: opts.self });
  return out;
}
