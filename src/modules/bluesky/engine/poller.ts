// The Bluesky poller (contract section 30; docs/bluesky.md): every instance that runs workers takes,
// each BLUESKY_POLL_INTERVAL_MS, the linked discussions whose next read is due — across tenants, in
// batches claimed with FOR UPDATE SKIP LOCKED by moving next_poll_at past a lease, so two instances never
// read one thread at once; batch after batch while a full one comes (at most PASS_BUDGET_MS a pass);
// one read at a time (an instance asks the AppView one thing at a time) — and for each:
//   - a link without a post (autoPost): posts the discussion from the site's account and links it;
//   - otherwise reads the post's thread from the tenant's AppView (getPostThread) and brings it in
//     (sync.ts): new replies become comments, replies gone there are removed here.
// Then it sets the next read (pace.ts): sooner while readers are on the page or replies come, later
// as the discussion ages, with a backoff when the read failed (the AppView down: nothing is lost, the
// next read brings in what was missed). Only this scan is across tenants; every write goes through
// the tenant's store and the comments' own domain functions.
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { contextForTenant, type AppServices, type RequestContext } from "../../../context/request.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { Settings } from "../../../tenancy/settings/tree.js";
import { pollLoop, type PollLoop } from "../../../lib/poll-loop.js";
import { AppError } from "../../../lib/errors.js";
import { isNotFound, publicAgent, siteAgent, xrpcProblem } from "../client.js";
import { publishDiscussion } from "../links.js";
import { readThread, THREAD_DEPTH } from "../thread.js";
import { nextPollDelay } from "./pace.js";
import { syncThread } from "./sync.js";

/** Links one pass claims at most. */
export const POLL_BATCH = 25;
/** How long a claimed link is held by its pass (a pass that dies lets it go after this). */
const LEASE_MS = 5 * 60_000;
/** How long one pass goes on taking batches while links are due (a stop ends it after the batch under way). */
const PASS_BUDGET_MS = 10_000;
/** A site with Bluesky off is looked at again after this. */
const DISABLED_RECHECK_MS = 60 * 60_000;

interface DueLink {
  tenantId: string;
  discussionId: string;
  uri: string | null;
  createdAt: Date;
  changedAt: Date | null;
  failures: number;
}

export interface BlueskyPoller extends PollLoop {
  /** One pass: the links it read (tests, and the loop). */
  runOnce(): Promise<number>;
}

export function createBlueskyPoller(deps: { app: AppServices; log: Logger }, intervalMs: number): BlueskyPoller {
  const { app, log } = deps;
  let running: Promise<number> | null = null;
  let stopping = false;

  async function claim(now: Date): Promise<DueLink[]> {
    // the one statement across tenants: which links are due, held for this pass
    return app.sql.query<DueLink>(
      `WITH due AS (
         SELECT tenant_id, discussion_id FROM bluesky_links WHERE next_poll_at <= $1::timestamptz
          ORDER BY next_poll_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       UPDATE bluesky_links l SET next_poll_at = $1::timestamptz + make_interval(secs => $3::int / 1000.0)
         FROM due WHERE l.tenant_id = due.tenant_id AND l.discussion_id = due.discussion_id
       RETURNING l.tenant_id AS "tenantId", l.discussion_id AS "discussionId", l.uri, l.created_at AS "createdAt",
                 l.changed_at AS "changedAt", l.failures`,
      [now, POLL_BATCH, LEASE_MS],
      "bluesky_claim",
    );
  }

  /** The read's outcome written: when the next one is, what failed. */
  async function settle(
    link: DueLink,
    outcome: { changed: boolean; error: string | null; readers: boolean; delayMs?: number },
  ): Promise<void> {
    const now = app.clock.now();
    const failures = outcome.error ? link.failures + 1 : 0;
    const changedAt = outcome.changed ? now : link.changedAt;
    const delay = outcome.delayMs ?? nextPollDelay({ now, linkedAt: link.createdAt, changedAt, failures, readers: outcome.readers });
    await app.stores(link.tenantId).sql.query(
      `UPDATE bluesky_links SET polled_at = $3::timestamptz, next_poll_at = $4::timestamptz, failures = $5, last_error = $6,
              changed_at = $7::timestamptz
        WHERE tenant_id = $1 AND discussion_id = $2`,
      [link.discussionId, now, new Date(now.getTime() + delay), failures, outcome.error, changedAt],
    );
  }

  /** autoPost: the discussion posted from the site's account, and its link given the post. */
  async function post(ctx: RequestContext, settings: Settings, link: DueLink): Promise<string | null> {
    const d = await app
      .stores(link.tenantId)
      .prisma.discussion.findFirst({ where: { id: link.discussionId }, select: { title: true, url: true } });
    if (!d?.url) return "the discussion has no url";
    try {
      const agent = await siteAgent(ctx, settings, app.bluesky.http);
      const made = await publishDiscussion(agent, { title: d.title, url: d.url }, app.clock.now());
      await app
        .stores(link.tenantId)
        .sql.query(`UPDATE bluesky_links SET uri = $3, cid = $4 WHERE tenant_id = $1 AND discussion_id = $2 AND uri IS NULL`, [
          link.discussionId,
          made.uri,
          made.cid,
        ]);
      return null;
    } catch (err) {
      return err instanceof AppError ? err.message.slice(0, 300) : xrpcProblem(err);
    }
  }

  async function readOne(link: DueLink): Promise<void> {
    const tenant = await tenantRow(app, link.tenantId);
    if (!tenant) return;
    const settings = resolveSettings(tenant.settings);
    const ctx = contextForTenant(app, tenant, { kind: "key", keyId: "bluesky", capabilities: new Set() });
    if (!settings.bluesky.enabled) {
      await settle(link, { changed: false, error: "Bluesky is off for this site", readers: false, delayMs: DISABLED_RECHECK_MS });
      return;
    }
    const [reading] = await app.streams.presence.count(link.tenantId, [link.discussionId]).catch(() => [0]);
    const readers = (reading ?? 0) > 0;
    if (link.uri === null) {
      const error = await post(ctx, settings, link);
      // a new post is read at once after (its first replies come within the minute)
      await settle(link, { changed: error === null, error, readers, ...(error === null ? { delayMs: 0 } : {}) });
      return;
    }
    let thread: unknown;
    try {
      const answer = await publicAgent(app.bluesky.http, settings.bluesky.appView).app.bsky.feed.getPostThread({
        uri: link.uri,
        depth: THREAD_DEPTH,
        parentHeight: 0,
      });
      thread = answer.data.thread;
    } catch (err) {
      const error = isNotFound(err) ? "the post is not found on the AppView (deleted, or not visible)" : xrpcProblem(err);
      await settle(link, { changed: false, error, readers });
      return;
    }
    const read = readThread(thread);
    if (!read.found) {
      await settle(link, { changed: false, error: "the post is not found on the AppView (deleted, or blocked)", readers });
      return;
    }
    const changes = await syncThread(ctx, settings, { discussionId: link.discussionId, uri: link.uri }, read);
    await settle(link, { changed: changes > 0, error: null, readers });
  }

  async function pass(): Promise<number> {
    const started = performance.now();
    let reads = 0;
    // batch after batch while links are due (a full batch: more may wait), within PASS_BUDGET_MS, until stopped
    for (;;) {
      const due = await claim(app.clock.now());
      for (const link of due) {
        await readOne(link).catch((err: unknown) =>
          log.warn(
            { err: (err as Error).message, tenantId: link.tenantId, discussionId: link.discussionId },
            "a Bluesky thread was not read",
          ),
        );
      }
      reads += due.length;
      if (stopping || due.length < POLL_BATCH || performance.now() - started > PASS_BUDGET_MS) return reads;
    }
  }

  function runOnce(): Promise<number> {
    running ??= pass().finally(() => (running = null));
    return running;
  }

  const loop = pollLoop(runOnce, intervalMs, (err) => log.warn({ err }, "a Bluesky poll pass failed"));
  return {
    runOnce,
    start() {
      stopping = false;
      loop.start();
    },
    stop() {
      stopping = true;
      return loop.stop();
    },
  };
}
