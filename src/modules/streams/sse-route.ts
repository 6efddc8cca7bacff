// GET /api/v1/stream/:discussionId — the per-discussion SSE stream (contract section 4, "Stream"), and
// GET /api/v1/stream/me — the reader's own stream (contract section 19; a discussion named "me" has
// no SSE stream of its own: the GraphQL subscription serves it).
// Everything that can fail (auth, 404, caps, the replay query) happens before the response head
// is written, so those errors are problem documents; after that the stream only ends.
//
// Served before fastify (src/http/raw-routes.ts): a reconnect storm after a deploy opens thousands
// of streams a second, and fastify's pipeline was a sixth of a connect's CPU. What that pipeline
// did for this route is done here with the same shared pieces: the request id, the /api/v1 CORS
// policy, problem documents, and the request recorder (metrics and the access log, written when
// the stream opens or is refused).
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "fast-querystring";
import { createRequestContext, type AppServices } from "../../context/request.js";
import { rateLimitHeaders } from "../../auth/rate-limit.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { errors } from "../../lib/errors.js";
import { str, type Query } from "../../http/rest/params.js";
import { internalError, knownFailure, writeProblem } from "../../http/problem.js";
import type { CorsPolicy } from "../../http/cors.js";
import { requestIdOf, type RequestRecorder } from "../../http/observability.js";
import type { RawRoutes } from "../../http/raw-routes.js";
import type { TrustedProxies } from "../../http/client-address.js";
import { readerStreamCaller, streamCaller } from "./engine/access.js";
import type { StreamHub } from "../../stream-engine/hub.js";
import { SseSink } from "../../stream-engine/sse-sink.js";
import { sseHeaders } from "../../stream-engine/sse-writer.js";
import { readersArrived } from "../bluesky/engine/readers-arrived.js";

const PREFIX = "/api/v1/stream/";
/** The route's pattern, as metrics and the access log name it. */
export const STREAM_ROUTE = `${PREFIX}:discussionId`;
/** The reader's own stream's path segment, and its route as metrics and the access log name it. */
const ME = "me";
export const ME_STREAM_ROUTE = `${PREFIX}${ME}`;

export interface StreamRouteDeps {
  app: AppServices;
  hub: StreamHub;
  cors: CorsPolicy;
  record: RequestRecorder;
  /** the client's address (the connection's peer, or the client a trusted proxy names): src/http/client-address.ts */
  addressOf: TrustedProxies["addressOf"];
}

/**
 * Browsers open the stream from the tenant's own pages (another origin) with a ticket, without
 * credentials mode: CORS (preflights included, which fastify answers) is the /api/v1 policy of
 * src/http/cors.ts, answered for the allowed origins only. The ticket (or key) is the credential.
 * GET only; anything else under the prefix (a preflight, POST /api/v1/stream/ticket, a path with
 * more segments) is fastify's.
 */
export function mountStreamRoute(raw: RawRoutes, deps: StreamRouteDeps): void {
  raw.add((req, res) => {
    const url = req.url ?? "";
    if (req.method !== "GET" || !url.startsWith(PREFIX)) return false;
    const q = url.indexOf("?");
    const segment = url.slice(PREFIX.length, q < 0 ? undefined : q);
    if (segment === "" || segment.includes("/")) return false;
    void serve(deps, req, res, segment, q < 0 ? "" : url.slice(q + 1));
    return true;
  });
}

async function serve(deps: StreamRouteDeps, req: IncomingMessage, res: ServerResponse, segment: string, search: string): Promise<void> {
  const started = performance.now();
  const reqId = requestIdOf(req.headers["x-request-id"]);
  // what every answer carries, the stream's head included
  const headers: Record<string, string> = { "X-Request-Id": reqId, ...deps.cors.headers(req.headers.origin) };
  const route = segment === ME ? ME_STREAM_ROUTE : STREAM_ROUTE;
  const record = (status: number) =>
    deps.record({ reqId, method: "GET", route, url: req.url ?? "", status, seconds: (performance.now() - started) / 1000 });
  try {
    if (segment === ME) await openReaderStream(deps, req, res, search, headers, () => record(200));
    else await openStream(deps, req, res, segment, search, headers, () => record(200));
  } catch (err) {
    if (res.headersSent) {
      deps.app.log.error({ err, reqId }, "stream failed after it started");
      res.destroy();
      return;
    }
    const known = knownFailure(err);
    if (!known) deps.app.log.error({ err, reqId }, "stream failed to start");
    const problem = known ?? internalError();
    if (!res.destroyed) writeProblem(res, problem, reqId, headers);
    record(problem.status);
  }
}

async function openStream(
  { app, hub, addressOf }: StreamRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  segment: string,
  search: string,
  headers: Record<string, string>,
  onOpen: () => void,
): Promise<void> {
  const discussionId = pathParameter(segment);
  if (!DISCUSSION_ID_RE.test(discussionId)) {
    throw errors.invalidParameter([{ path: "discussionId", message: DISCUSSION_ID_RULE }]);
  }
  const { ctx, ticket, viaToken, after } = await authenticate(app, addressOf, req, search, headers);
  const caller = await streamCaller(ctx, {
    discussionId,
    ticket,
    viaQueryToken: viaToken,
    lastEventId: after,
    origin: req.headers.origin,
  });
  const sink = sseSink(app, hub, res, headers, onOpen, caller.tenantId, discussionId);
  await hub.open(
    {
      tenantId: caller.tenantId,
      discussionId,
      viewer: caller.viewer,
      after,
      settings: caller.settings,
      ticket: caller.ticket,
      redeem: caller.redeem,
      address: caller.address,
    },
    sink,
  );
  // a reader on a page whose discussion is linked to a Bluesky post: its replies are read within the minute
  if (caller.settings.bluesky.enabled) {
    void readersArrived(app, caller.tenantId, discussionId).catch((err: unknown) =>
      app.log.warn({ err: (err as Error).message }, "the Bluesky read was not brought forward"),
    );
  }
}

/** GET /api/v1/stream/me: the same auth (a key with X-Service-Identity, a ticket of scope me, the deprecated ?token=), caps and framing. */
async function openReaderStream(
  { app, hub, addressOf }: StreamRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  search: string,
  headers: Record<string, string>,
  onOpen: () => void,
): Promise<void> {
  const { ctx, ticket, after } = await authenticate(app, addressOf, req, search, headers);
  const caller = await readerStreamCaller(ctx, { ticket, lastEventId: after, origin: req.headers.origin });
  const sink = sseSink(app, hub, res, headers, onOpen, caller.tenantId, ME);
  await hub.openReader(
    { tenantId: caller.tenantId, readerId: caller.readerId, after, settings: caller.settings, ticket: caller.ticket },
    sink,
  );
}

/**
 * Both streams' preamble: the request's context from the key in a header or the deprecated
 * ?token= (that one marked Deprecation and Sunset on the answer), the budget left on the answer's
 * headers, the ticket (only when no key is in a header) and where to resume.
 */
async function authenticate(
  app: AppServices,
  addressOf: TrustedProxies["addressOf"],
  req: IncomingMessage,
  search: string,
  headers: Record<string, string>,
) {
  const query = (search === "" ? {} : parseQuery(search)) as Query;
  const ticket = str(query, "ticket");
  const token = str(query, "token");
  const after = lastEventId(req.headers["last-event-id"], str(query, "lastEventId"));

  const headerAuth = Boolean(req.headers["x-api-key"] || req.headers.authorization);
  // ?token= is an API key in the query string: deprecated (it ends up in logs and histories).
  const viaToken = !headerAuth && !ticket && token !== undefined;
  if (viaToken) Object.assign(headers, { Deprecation: "true", Sunset: app.config.TOKEN_SUNSET });

  // the client's address, as fastify's req.ip is for the other routes (the same trust of proxies)
  const ip = addressOf(req);
  const ctx = await createRequestContext(app, viaToken ? { ...req.headers, "x-api-key": token } : req.headers, { method: "GET", ip });
  // the budget left, on the stream's head as on every counted answer
  if (ctx.rateLimit) Object.assign(headers, rateLimitHeaders(ctx.rateLimit));
  return { ctx, ticket: headerAuth ? undefined : ticket, viaToken, after };
}

/** The discussion id as sent (URL-encoded); undecodable → the router's 400, as for any route. */
function pathParameter(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw errors.invalidParameter([{ path: "url", message: "a path parameter is too long or not valid URL encoding" }]);
  }
}

/** The stream's sink: its head carries `headers`; a client that falls behind its buffer bound is let go. */
function sseSink(
  app: AppServices,
  hub: StreamHub,
  res: ServerResponse,
  headers: Record<string, string>,
  onOpen: () => void,
  tenantId: string,
  discussionId: string,
) {
  return new SseSink(res, {
    headers: sseHeaders(headers),
    maxBufferedBytes: hub.options.maxBufferedBytes,
    onOpen,
    onOverflow: overflowReporter(app, hub, tenantId, discussionId),
  });
}

// Made outside openStream, so a long-lived stream does not keep its request's objects alive.
function overflowReporter(app: AppServices, hub: StreamHub, tenantId: string, discussionId: string) {
  return () => {
    hub.noteOverflow();
    app.log.info({ tenantId, discussionId }, "stream client fell behind its buffer bound; disconnected");
  };
}

/** the largest seq an event can have (int4) */
const SEQ_MAX = 2_147_483_647;

/** `Last-Event-ID` (set by EventSource on reconnect) wins over `?lastEventId=`; absent = live only. */
function lastEventId(header: string | string[] | undefined, param: string | undefined): number | null {
  const h = Array.isArray(header) ? header[0] : header;
  const [raw, path] = h !== undefined && h.trim() !== "" ? [h.trim(), "Last-Event-ID"] : [param, "lastEventId"];
  if (raw === undefined) return null;
  // an event's seq is an int4 column (the discussion's events and a reader's inbox): past it PostgreSQL refuses the statement
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > SEQ_MAX)
    throw errors.invalidParameter([{ path, message: `must be a non-negative integer (an event seq) at most ${SEQ_MAX}` }]);
  return Number(raw);
}
