// The AT Protocol as the service speaks it (contract section 30), with @atproto/api's AtpAgent over
// the webhooks' guarded client (src/outbound/http-client.ts guardedFetch: every address checked when
// connecting — the tenant's AppView and server are a tenant's URLs like a webhook's — no redirects,
// answers bounded to BLUESKY_MAX_RESPONSE_BYTES, each call within BLUESKY_TIMEOUT_MS):
// - the AppView, public, no session: a post's thread (app.bsky.feed.getPostThread), a post
//   (getPosts), a handle's DID (com.atproto.identity.resolveHandle);
// - the site's account on its server: signed in with its app password once, its session (access and
//   refresh tokens) kept sealed in bluesky_sessions and refreshed by the agent as it expires
//   (persistSession writes the new one back); a changed handle or server signs in again. Neither the
//   password nor a token is ever logged: the agent's errors are turned into problems that name the
//   XRPC error alone.
import { AtpAgent, type AtpSessionData, type AtpSessionEvent } from "@atproto/api";
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import { guardedFetch, type WebhookHttpClient } from "../../outbound/http-client.js";
import { blueskyAppPassword } from "./settings.js";

/** One XRPC call's time limit. */
export const BLUESKY_TIMEOUT_MS = 10_000;
/** The most of one answer read (a thread of a few thousand replies). */
export const BLUESKY_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

type Fetch = typeof globalThis.fetch;

/** A `fetch` for AtpAgent over the guarded client (it calls with a Request, or a URL and init). */
export function xrpcFetch(http: WebhookHttpClient): Fetch {
  const send = guardedFetch(http, BLUESKY_TIMEOUT_MS);
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const body = req.method === "POST" ? new Uint8Array(await req.arrayBuffer()) : null;
    return send(req.url, { method: req.method, headers: req.headers, body, ...(req.signal ? { signal: req.signal } : {}) });
  }) as Fetch;
}

/** Public agents by client and service: an agent holds no session, and making one builds every lexicon namespace. */
const publicAgents = new WeakMap<WebhookHttpClient, Map<string, AtpAgent>>();
/** Services whose agents one client keeps at most (the tenants' AppViews: a few in practice). */
const MAX_PUBLIC_AGENTS = 100;

/** A public agent of an XRPC service (the AppView), made once per service. */
export function publicAgent(http: WebhookHttpClient, service: string): AtpAgent {
  let agents = publicAgents.get(http);
  if (!agents) publicAgents.set(http, (agents = new Map()));
  let agent = agents.get(service);
  if (!agent) {
    if (agents.size >= MAX_PUBLIC_AGENTS) agents.delete(agents.keys().next().value!);
    agents.set(service, (agent = new AtpAgent({ service, fetch: xrpcFetch(http) })));
  }
  return agent;
}

/** An XRPC failure as a short line: its error name and status, never a token or the request. */
export function xrpcProblem(err: unknown): string {
  const e = err as { error?: unknown; status?: unknown; message?: unknown; kind?: unknown } | null;
  if (e && typeof e.kind === "string" && typeof e.message === "string") return `${e.kind}: ${e.message}`.slice(0, 300);
  const name = typeof e?.error === "string" ? e.error : "XRPCError";
  const status = typeof e?.status === "number" ? ` (${e.status})` : "";
  const message = typeof e?.message === "string" && e.message !== name ? `: ${e.message}` : "";
  return `${name}${status}${message}`.slice(0, 300);
}

/** The XRPC answer said the thing named is not there (a post deleted, a handle unknown). */
export const isNotFound = (err: unknown): boolean => {
  const e = err as { error?: unknown; status?: unknown } | null;
  return (
    e?.error === "NotFound" || e?.error === "InvalidRequest" || (e?.status === 400 && /not ?found/i.test(String((err as Error).message)))
  );
};

interface StoredSession {
  handle: string;
  service: string;
  did: string;
  sessionEnc: string;
}

/**
 * The site account's agent, signed in: its stored session resumed (and refreshed by the agent when it
 * has expired), else a new one made with the app password. 409 bluesky_account_missing when the
 * settings have no handle or app password; 502 bluesky_unreachable when its server refuses or does not answer.
 */
export async function siteAgent(ctx: RequestContext, settings: Settings, http: WebhookHttpClient): Promise<AtpAgent> {
  const { handle, service } = settings.bluesky;
  const password = blueskyAppPassword(ctx.app.secretBox, settings);
  if (!handle || !password) throw errors.blueskyAccountMissing();
  const tenantId = tenantIdOf(ctx);
  const sessions = db(ctx).blueskySession;
  const persist = (event: AtpSessionEvent, session: AtpSessionData | undefined) => {
    if (event === "expired" || event === "create-failed" || !session) {
      void sessions.deleteMany({}).catch(() => undefined);
      return;
    }
    const row = {
      handle,
      service,
      did: session.did,
      sessionEnc: ctx.app.secretBox.seal(JSON.stringify(session)),
      updatedAt: ctx.app.clock.now(),
    };
    void sessions
      .upsert({ where: { tenantId }, create: { tenantId, ...row }, update: row })
      .catch((err: unknown) => ctx.app.log.warn({ err: (err as Error).message }, "the Bluesky session was not kept"));
  };
  const agent = new AtpAgent({ service, fetch: xrpcFetch(http), persistSession: persist });
  const stored: StoredSession | null = await sessions.findFirst({});
  try {
    if (stored && stored.handle === handle && stored.service === service) {
      try {
        await agent.resumeSession(JSON.parse(ctx.app.secretBox.open(stored.sessionEnc)) as AtpSessionData);
        return agent;
      } catch {
        // expired past refreshing, or revoked: a new session below
      }
    }
    await agent.login({ identifier: handle, password });
    return agent;
  } catch (err) {
    throw errors.blueskyUnreachable(`the account ${handle} could not sign in at ${service}: ${xrpcProblem(err)}`);
  }
}
