// The fediverse's HTTP side (contract section 24; docs/fediverse.md), handed to Fedify
// (engine/federation.ts) from Fastify routes of their own: WebFinger and NodeInfo under
// /.well-known/, /nodeinfo/2.1, and everything under /ap/ (actors, inboxes, the shared inbox, outbox,
// followers, Articles, Notes). They are plain routes (src/http/plain-route.ts), so they keep the request id, the
// access log and the metrics every route has; their bodies are read raw, bounded by
// MAX_INBOX_BODY_BYTES (413 past it), in a scope of their own (its content-type parser touches no
// other route). Before Fedify sees an inbound activity, this mount refuses what must never be stored:
// a body that is not a bounded JSON object (400), an unsigned one (401), one whose actor's domain a
// concerned tenant blocks (403); then it verifies the HTTP signature itself, over the bytes that came,
// and that the key is its actor's (engine/signer.ts; 401), refuses a signing key's domain a concerned
// tenant blocks (403), a domain past its rate (429, charged to the verified key's domain), a signed
// body that is not an activity or whose id is on another origin than its actor's (400); and it stores
// the activity without its Linked Data signature (never verified: Fedify is built to skip
// signatures, engine/federation.ts) for the worker to apply, answering 202 (engine/inbound.ts). A domain's rate counts only activities whose signature verified:
// a forged or unsigned one is counted in a stricter budget of its sender's address (past which that
// address is refused, 429, before anything is verified or fetched).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, errors } from "../../lib/errors.js";
import { sendProblem } from "../../http/problem.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { publicBase } from "../../http/public-base.js";
import { jsonDepthWithin } from "../../lib/json-depth.js";
import type { FederationEngine } from "./engine/engine.js";
import { anyTenantFederates, domainBlocked, federatingTenant, type FederatingTenant } from "./engine/tenants.js";
import { verifySigner, withoutLdSignature } from "./engine/signer.js";
import { pageOf } from "./engine/pages.js";
import { domainWebFinger, withForms } from "./engine/webfinger.js";

/** The largest inbound activity read (Mastodon's are a few KiB). */
export const MAX_INBOX_BODY_BYTES = 256 * 1024;
/** The deepest JSON nesting an inbound activity may have. */
const MAX_INBOX_DEPTH = 32;

const ACTOR_PATH = /\/ap\/actors\/([^/?#]+)/g;

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The host a JSON value names as an id (a string, or an object's `id`). */
function hostOf(v: unknown): string | null {
  const id =
    typeof v === "string"
      ? v
      : typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "string"
        ? (v as { id: string }).id
        : null;
  return id ? (URL.parse(id)?.hostname ?? null) : null;
}

/** An inbound activity past the first refusals: what it is, and the site(s) it concerns. */
interface Screened {
  activity: Record<string, unknown>;
  tenants: FederatingTenant[];
}

/**
 * The refusals made before anything is verified or fetched (see the file's head): a body that is
 * not a bounded JSON object, an address past its budget of forgeries, no signature, an actor on a
 * domain a concerned site blocks.
 */
async function screenInbound(engine: FederationEngine, req: FastifyRequest, body: Buffer): Promise<AppError | Screened> {
  const text = body.toString("utf8");
  if (!jsonDepthWithin(text, MAX_INBOX_DEPTH)) return errors.malformedJson(`The activity nests deeper than ${MAX_INBOX_DEPTH} levels.`);
  let activity: unknown;
  try {
    activity = JSON.parse(text);
  } catch {
    return errors.malformedJson();
  }
  if (typeof activity !== "object" || activity === null || Array.isArray(activity))
    return errors.malformedJson("An activity is a JSON object.");
  const { forgedLimiter, app } = engine.data;
  // an address that sent too many activities without a valid signature this minute is not heard
  if (await forgedLimiter.exhausted(req.ip)) return errors.rateLimited(60);
  const actorHost = hostOf((activity as { actor?: unknown }).actor);
  if ((!req.headers.signature && !req.headers["signature-input"]) || !actorHost) {
    await forgedLimiter.tryConsume(req.ip);
    return errors.signatureInvalid();
  }
  // the tenants it concerns: the inbox's own, and every actor of ours the activity names
  const ids = new Set([...(req.url + text).matchAll(ACTOR_PATH)].map((m) => decode(m[1]!)));
  const tenants: FederatingTenant[] = [];
  for (const tenantId of [...ids].slice(0, 20)) {
    const t = await federatingTenant(app, tenantId);
    if (!t) continue;
    if (domainBlocked(t.settings.blockedDomains, actorHost)) return errors.domainBlocked(actorHost);
    tenants.push(t);
  }
  return { activity: activity as Record<string, unknown>, tenants };
}

/**
 * The activity's HTTP signature, verified over the bytes that came (signer.ts), and what follows it:
 * a forgery is counted in its sender's address's budget (401); the key's domain, once verified, is
 * refused when a concerned site blocks it (403) and charged one activity of its budget (429 past it);
 * a signed body that is not an activity, or whose id is on another origin than its actor's, is 400.
 * Else the activity to hand Fedify: the one that came, without its Linked Data signature.
 */
async function admitInbound(
  engine: FederationEngine,
  req: FastifyRequest,
  signed: Request,
  screened: Screened,
): Promise<AppError | { activity: Record<string, unknown>; stripped: boolean; sender: string }> {
  const stripped = withoutLdSignature(screened.activity);
  const signer = await verifySigner(signed, stripped ?? screened.activity, engine);
  const { inboxLimiter, forgedLimiter } = engine.data;
  if (!signer) {
    await forgedLimiter.tryConsume(req.ip);
    return errors.signatureInvalid();
  }
  const keyHost = signer.keyId.hostname;
  for (const t of screened.tenants) if (domainBlocked(t.settings.blockedDomains, keyHost)) return errors.domainBlocked(keyHost);
  if (!(await inboxLimiter.tryConsume(keyHost))) return errors.rateLimited(60);
  if (signer.problem === "notAnActivity") return errors.activityInvalid("The body is not an ActivityPub activity.");
  if (signer.problem === "foreignId")
    return errors.activityInvalid("The activity's id, or its object's, is not on its actor's origin (scheme, host and port).");
  return { activity: stripped ?? screened.activity, stripped: stripped !== null, sender: keyHost };
}

/**
 * Where a verified activity to an inbox goes: stored for the worker (engine/inbound.ts), answered 202.
 * The job is counted to a site it concerns: the personal inbox's (404 when that site does not
 * federate), else the first site whose actor it names, else the first holding a remote object it
 * names, else one its actor follows; one that concerns no site is answered 202 and not stored, as
 * its listeners would do nothing.
 */
async function queueInbound(
  engine: FederationEngine,
  reply: FastifyReply,
  url: URL,
  screened: Screened,
  admitted: { activity: Record<string, unknown>; sender: string },
  personal: string | null,
): Promise<FastifyReply> {
  let tenantId: string | null = null;
  if (personal !== null) {
    // its site federates: asked before the activity was read (mountFederation)
    tenantId = personal;
  } else {
    tenantId = screened.tenants[0]?.tenant.id ?? null;
    tenantId ??= await engine.inbound.tenantHolding(admitted.activity);
  }
  if (tenantId !== null) await engine.inbound.store(tenantId, url, admitted.activity, admitted.sender);
  return reply.status(202).send();
}

/** The inbox a path is (under the prefix): a site's (its id) or the shared one (null); else undefined. */
function inboxOf(prefix: string, path: string): { tenantId: string | null } | undefined {
  if (!path.startsWith(`${prefix}/ap/`)) return undefined;
  const rest = path.slice(prefix.length);
  if (rest === "/ap/inbox") return { tenantId: null };
  const m = /^\/ap\/actors\/([^/]+)\/inbox$/.exec(rest);
  return m ? { tenantId: decode(m[1]!) } : undefined;
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** The site a path names (`/ap/actors/{id}…`), null for the shared inbox and any other path. */
function siteOf(path: string): { tenantId: string | null } {
  const m = /^\/ap\/actors\/([^/]+)/.exec(path);
  return { tenantId: m ? decode(m[1]!) : null };
}

async function send(reply: FastifyReply, res: Response): Promise<FastifyReply> {
  if (res.status === 401) return sendProblem(reply, errors.signatureInvalid());
  if (res.status === 404) return sendProblem(reply, errors.notFound("Fediverse document"));
  res.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "transfer-encoding") reply.header(name, value);
  });
  return reply.status(res.status).send(Buffer.from(await res.arrayBuffer()));
}

export function mountFederation(fastify: FastifyInstance, engine: FederationEngine): void {
  const { app } = engine.data;
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?")[0]!;
    // no PUBLIC_URL in production: no federation at all (engine.ts, `available`)
    if (!engine.available) return sendProblem(reply, errors.notFound("Fediverse document"));
    if ((path.startsWith("/nodeinfo/") || path === "/.well-known/nodeinfo") && !(await anyTenantFederates(app))) {
      return sendProblem(reply, errors.notFound("NodeInfo"));
    }
    const body = req.method === "POST" ? (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)) : null;
    let screened: Screened | null = null;
    // a site that does not federate has nothing here, whatever is asked of it (its actor, collections,
    // Articles and inbox, in any representation), nor the shared inbox while none federates: before
    // anything of a POST's activity is read, let alone its signature
    const target = siteOf(path);
    const off =
      target.tenantId !== null ? !(await federatingTenant(app, target.tenantId)) : body !== null && !(await anyTenantFederates(app));
    if (off) return sendProblem(reply, errors.notFound("Fediverse document"));
    if (body) {
      const first = await screenInbound(engine, req, body);
      if (first instanceof AppError) return sendProblem(reply, first);
      screened = first;
    }
    const origin = engine.origin()?.origin ?? new URL(publicBase(app.config, req)).origin;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    }
    // behind a proxy's prefix (PUBLIC_URL's path) the request comes without it: Fedify routes, and
    // the signature is verified over, the path the sender used (the well-known ones are at the host's root)
    let url = new URL(engine.pathPrefix && !path.startsWith("/.well-known/") ? `${engine.pathPrefix}${req.url}` : req.url, origin);
    // a site's handle on its own domain: Fedify is asked for the PUBLIC_URL form (engine/webfinger.ts)
    const forms = path === "/.well-known/webfinger" && !body ? await domainWebFinger(app, url, engine.pathPrefix) : null;
    if (forms) url = forms.url;
    let request = new Request(url, { method: req.method, headers, ...(body ? { body: new Uint8Array(body) } : {}) });
    if (screened) {
      const admitted = await admitInbound(engine, req, request, screened);
      if (admitted instanceof AppError) return sendProblem(reply, admitted);
      const inbox = inboxOf(engine.pathPrefix, url.pathname);
      if (inbox) return await queueInbound(engine, reply, url, screened, admitted, inbox.tenantId);
      if (admitted.stripped) {
        // what Fedify reads is the activity without its Linked Data signature (its HTTP one is verified)
        headers.delete("content-length");
        request = new Request(url, { method: req.method, headers, body: JSON.stringify(admitted.activity) });
      }
    }
    const res = await engine.federation.fetch(request, {
      contextData: engine.data,
      onNotFound: () => new Response(null, { status: 404 }),
      onNotAcceptable: async () => {
        const page = await pageOf(engine.data.app, path);
        return page
          ? new Response(null, { status: 302, headers: { location: page, vary: "Accept" } })
          : new Response("Not acceptable: ask for application/activity+json", { status: 406, headers: { vary: "Accept" } });
      },
    });
    if (forms && res.status === 200) {
      const text = await res.text();
      const jrd = withForms(parseJson(text), forms);
      return reply
        .status(200)
        .header("content-type", "application/jrd+json")
        .header("access-control-allow-origin", "*")
        .send(jrd ? JSON.stringify(jrd) : text);
    }
    return await send(reply, res);
  };
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_INBOX_BODY_BYTES }, (_req, body, done) => done(null, body));
    for (const url of ["/.well-known/webfinger", "/.well-known/nodeinfo", "/nodeinfo/*", "/ap/*"]) {
      mountPlainRoute(scope, app, {
        method: ["GET", "POST"],
        url,
        bodyLimit: MAX_INBOX_BODY_BYTES,
        what: "a fediverse request",
        // a POST (an activity to an inbox) holds the worker's applying back while it runs (engine/inbound.ts)
        handler: (req, reply) => (req.method === "POST" ? engine.inbound.pressure.receiving(() => handle(req, reply)) : handle(req, reply)),
      });
    }
  });
}
