// Who is opening a stream, and what it may see: an API key (X-API-Key, or the deprecated
// ?token=) optionally with X-Service-Identity, or a ticket minted by POST /api/v1/stream/ticket.
import { currentReader, loadTenant, requireReader, type RequestContext } from "../../../context/request.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { type Settings } from "../../../tenancy/settings/tree.js";
import { keyState } from "../../../auth/key-auth.js";
import { hasCapability } from "../../../auth/principal.js";
import { errors } from "../../../lib/errors.js";
import {
  invalidTicket,
  READER_SCOPE,
  redeemStreamTicket,
  ticketTenant,
  type RedeemedTicket,
} from "../../../stream-engine/ticket-redemption.js";
import type { PendingTicket } from "../../../stream-engine/hub-types.js";
import type { Viewer } from "../../../stream-engine/event-visibility.js";

export interface StreamCaller {
  tenantId: string;
  /** the tenant's settings (a key's come with the key's cached row; a ticket's tenant's from the hub) */
  settings: Settings;
  viewer: Viewer;
  /** opened with a ticket: what the hub needs to let a reconnect supersede this connection */
  ticket?: { hash: string; connectionId: string; resumed: boolean };
  /** a ticket naming `tenantId`, redeemed by the hub in the connect's own statement */
  redeem?: PendingTicket;
  /** the client's address, which presence counts a reader-less stream by */
  address: string | null;
}

/** Who a stream with a ticket is for, before the redemption says (the hub binds the real one). */
const NOBODY: Viewer = { moderator: false, readerId: null };

/**
 * The caller of a stream: the request's principal when it has one, else the ticket.
 *
 * Moderator visibility (pending/rejected content) only goes to a backend's own stream: X-API-Key
 * in the header, a key holding moderate_content, and no reader identity. Tickets and the
 * deprecated ?token= are how browsers connect, and a stream bound to a reader is a reader's:
 * those are reader streams, which never see pending or rejected comments (contract §4 Stream),
 * whatever the capabilities of the key behind them.
 *
 * A ticket naming a tenant this instance knows is redeemed by the hub, in the statement that also
 * reads the log; any other is redeemed here first.
 */
export async function streamCaller(
  ctx: RequestContext,
  opts: {
    discussionId: string;
    ticket?: string | null | undefined;
    viaQueryToken?: boolean;
    lastEventId?: number | null;
    /** the browser's Origin header: a ticket works only on an origin its tenant allows */
    origin?: string | null | undefined;
  },
): Promise<StreamCaller> {
  const address = ctx.clientAddress ?? null;
  if (ctx.principal) {
    const reader = await currentReader(ctx);
    const moderator = !reader && !opts.viaQueryToken && hasCapability(ctx.principal, "moderate_content");
    const settings = resolveSettings((await loadTenant(ctx)).settings);
    return { tenantId: ctx.principal.tenantId, settings, viewer: { moderator, readerId: reader?.id ?? null }, address };
  }
  if (opts.ticket) {
    const app = ctx.app;
    const { origin } = opts;
    const pending: PendingTicket = {
      redemption: {
        raw: opts.ticket,
        discussionId: opts.discussionId,
        resuming: opts.lastEventId !== undefined && opts.lastEventId !== null,
        resumeSeconds: app.config.STREAM_TICKET_RESUME_SECONDS,
      },
      accept: (t, settings) => ({ moderator: false, readerId: acceptTicket(ctx, t, settings, origin) }),
    };
    const named = ticketTenant(opts.ticket);
    if (named && app.streams.knowsTenant(named)) {
      return { tenantId: named, settings: await app.streams.settingsOf(named), viewer: NOBODY, redeem: pending, address };
    }
    const t = await redeemStreamTicket(app.sql, { ...pending.redemption, now: app.clock.now() });
    const settings = await app.streams.settingsOf(t.tenantId);
    return {
      tenantId: t.tenantId,
      settings,
      viewer: pending.accept(t, settings),
      ticket: { hash: t.hash, connectionId: t.connectionId, resumed: t.resumed },
      address,
    };
  }
  throw errors.unauthenticated("A stream needs X-API-Key, ?ticket= (from POST /api/v1/stream/ticket) or the deprecated ?token=.");
}

/** A redeemed ticket's checks (its minter, the browser's origin); answers the reader it is bound to. */
function acceptTicket(ctx: RequestContext, t: RedeemedTicket, settings: Settings, origin: string | null | undefined): string | null {
  const app = ctx.app;
  if (t.apiKeyId) assertMinterActive(t.minter, app.clock.now());
  if (origin && !app.origins.tenantAllows(settings, origin)) {
    app.origins.refused(origin, t.tenantId);
    throw errors.originNotAllowed(origin);
  }
  return t.readerId;
}

export interface ReaderStreamCaller {
  tenantId: string;
  readerId: string;
  settings: Settings;
  ticket?: { hash: string; connectionId: string; resumed: boolean };
}

/**
 * The caller of a reader's own stream (GET /api/v1/stream/me, the myInbox subscription): a key (or
 * admin JWT) with X-Service-Identity — without one, the problem every identity route answers — or a
 * ticket minted with `{"scope": "me"}` and an identity. A ticket is redeemed on its own (then the
 * stream reads the inbox): a discussion's ticket is refused here like any unknown one.
 */
export async function readerStreamCaller(
  ctx: RequestContext,
  opts: { ticket?: string | null | undefined; lastEventId?: number | null; origin?: string | null | undefined },
): Promise<ReaderStreamCaller> {
  if (ctx.principal) {
    const reader = await requireReader(ctx);
    return { tenantId: ctx.principal.tenantId, readerId: reader.id, settings: resolveSettings((await loadTenant(ctx)).settings) };
  }
  if (opts.ticket) {
    const app = ctx.app;
    const t = await redeemStreamTicket(app.sql, {
      raw: opts.ticket,
      discussionId: READER_SCOPE,
      resuming: opts.lastEventId !== undefined && opts.lastEventId !== null,
      resumeSeconds: app.config.STREAM_TICKET_RESUME_SECONDS,
      now: app.clock.now(),
    });
    const settings = await app.streams.settingsOf(t.tenantId);
    const readerId = acceptTicket(ctx, t, settings, opts.origin);
    if (!readerId) throw invalidTicket();
    return { tenantId: t.tenantId, readerId, settings, ticket: { hash: t.hash, connectionId: t.connectionId, resumed: t.resumed } };
  }
  throw errors.unauthenticated(
    "The reader's stream needs X-API-Key with X-Service-Identity, or ?ticket= (from POST /api/v1/stream/ticket with scope me).",
  );
}

/** A ticket is only as good as the key that minted it, as of now: a revoked or expired key's tickets fail. */
function assertMinterActive(minter: RedeemedTicket["minter"], now: Date): void {
  if (!minter) throw errors.unauthenticated("The key that minted this ticket no longer exists.");
  const state = keyState(minter, now);
  if (state === "revoked") throw errors.keyRevoked();
  if (state === "expired") throw errors.keyExpired();
}
