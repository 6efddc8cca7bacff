// The fediverse's HTTP side (contract section 24; docs/fediverse.md), handed to Fedify
// (engine/federation.ts) from Fastify routes of their own: WebFinger and NodeInfo under
// /.well-known/, /nodeinfo/2.1, and everything under /ap/ (actors, inboxes, the shared inbox, outbox,
// followers, Articles, Notes). They are ordinary Fastify routes, so they keep the request id, the
// access log and the metrics every route has; their bodies are read raw, bounded by
// MAX_INBOX_BODY_BYTES (413 past it), in a scope of their own (its content-type parser touches no
// other route). Before Fedify sees an inbound activity, this mount refuses what must never be stored:
// a body that is not a bounded JSON object (400), an unsigned one (401), one from a domain a target
// tenant blocks (403; the actor's and the signing key's domains), a domain past its rate (429). Fedify
// then verifies the signature and the key's owner (401: problem documents here too). A domain's rate
// counts only activities whose signature verified: one Fedify refuses is given back to its domain's
// budget and counted, as an unsigned one is, in a stricter budget of its sender's address (past which
// that address is refused, 429, before anything is verified or fetched).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, errors } from "../../lib/errors.js";
import { internalError, sendProblem } from "../../http/problem.js";
import { publicBase } from "../../http/public-base.js";
import { jsonDepthWithin } from "../../lib/json-depth.js";
import type { FederationEngine } from "./engine/engine.js";
import { anyTenantFederates, domainBlocked, federatingTenant } from "./engine/tenants.js";
import { pageOf } from "./engine/pages.js";

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

/** The signing key's host, from draft-cavage's Signature or RFC 9421's Signature-Input. */
function keyHostOf(req: FastifyRequest): string | null {
  const header = [req.headers.signature, req.headers["signature-input"]].filter((h): h is string => typeof h === "string").join(" ");
  const m = /keyid="([^"]+)"/i.exec(header);
  return m?.[1] ? (URL.parse(m[1])?.hostname ?? null) : null;
}

/** An inbound activity let through to Fedify: the domain whose budget it was counted in, and its sender's address. */
interface Admitted {
  domain: string;
  address: string;
}

/**
 * The refusals made before Fedify (see the file's head); else the activity is counted in its
 * domain's budget, given back by `settleInbound` if Fedify finds its signature forged.
 */
async function screenInbound(engine: FederationEngine, req: FastifyRequest, body: Buffer): Promise<AppError | Admitted> {
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
  const { inboxLimiter, forgedLimiter } = engine.data;
  // an address that sent too many activities without a valid signature this minute is not heard
  if (await forgedLimiter.exhausted(req.ip)) return errors.rateLimited(60);
  const actorHost = hostOf((activity as { actor?: unknown }).actor);
  const keyHost = keyHostOf(req);
  const domain = keyHost ?? actorHost;
  if ((!req.headers.signature && !req.headers["signature-input"]) || !domain) {
    await forgedLimiter.tryConsume(req.ip);
    return errors.signatureInvalid();
  }
  const { app } = engine.data;
  // the tenants it concerns: the inbox's own, and every actor of ours the activity names
  const tenants = new Set([...(req.url + text).matchAll(ACTOR_PATH)].map((m) => decode(m[1]!)));
  for (const tenantId of [...tenants].slice(0, 20)) {
    const t = await federatingTenant(app, tenantId);
    if (!t) continue;
    for (const host of [actorHost, keyHost]) if (host && domainBlocked(t.settings.blockedDomains, host)) return errors.domainBlocked(host);
  }
  if (!(await inboxLimiter.tryConsume(domain))) return errors.rateLimited(60);
  return { domain, address: req.ip };
}

/** Fedify's answer to an admitted activity: a refused signature (401) is counted as its address's forgery, not in the domain's budget. */
async function settleInbound(engine: FederationEngine, admitted: Admitted, res: Response): Promise<void> {
  if (res.status !== 401) return;
  await engine.data.inboxLimiter.reward(admitted.domain);
  await engine.data.forgedLimiter.tryConsume(admitted.address);
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
    try {
      const path = req.url.split("?")[0]!;
      if ((path.startsWith("/nodeinfo/") || path === "/.well-known/nodeinfo") && !(await anyTenantFederates(app))) {
        return sendProblem(reply, errors.notFound("NodeInfo"));
      }
      const body = req.method === "POST" ? (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)) : null;
      let admitted: Admitted | null = null;
      if (body) {
        const screened = await screenInbound(engine, req, body);
        if (screened instanceof AppError) return sendProblem(reply, screened);
        admitted = screened;
      }
      const origin = engine.origin()?.origin ?? new URL(publicBase(app.config, req)).origin;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      }
      // behind a proxy's prefix (PUBLIC_URL's path) the request comes without it: Fedify routes, and
      // verifies signatures over, the path the sender used (the well-known ones are at the host's root)
      const url = engine.pathPrefix && !path.startsWith("/.well-known/") ? `${engine.pathPrefix}${req.url}` : req.url;
      const request = new Request(new URL(url, origin), {
        method: req.method,
        headers,
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
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
      if (admitted) await settleInbound(engine, admitted, res);
      return await send(reply, res);
    } catch (err) {
      if (err instanceof AppError) return sendProblem(reply, err);
      req.log.error({ err }, "a fediverse request failed");
      return sendProblem(reply, internalError());
    }
  };
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_INBOX_BODY_BYTES }, (_req, body, done) => done(null, body));
    for (const url of ["/.well-known/webfinger", "/.well-known/nodeinfo", "/nodeinfo/*", "/ap/*"]) {
      scope.route({ method: ["GET", "POST"], url, bodyLimit: MAX_INBOX_BODY_BYTES, handler: handle });
    }
  });
}
