// GET /api/v1/stream/:discussionId — the per-discussion SSE stream (contract section 4, "Stream").
// Everything that can fail (auth, 404, caps, the replay query) happens before the response head
// is written, so those errors are problem documents; after that the stream only ends.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createRequestContext, type AppServices } from "../../context/request.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { errors } from "../../lib/errors.js";
import { str, type Query } from "../../http/rest/params.js";
import { internalError, knownFailure, sendProblem } from "../../http/problem.js";
import { streamCaller } from "./access.js";
import type { StreamHub } from "../../stream/hub.js";
import { SseSink } from "../../stream/sse-sink.js";
import { sseHeaders } from "../../stream/sse-writer.js";

/**
 * Browsers open the stream from the tenant's own pages (another origin) with a ticket, without
 * credentials mode: CORS (preflights included) is the /api/v1 policy of src/http/cors.ts, answered
 * for the allowed origins only. The ticket (or key) is the credential.
 */
export function mountStreamRoute(fastify: FastifyInstance, app: AppServices, hub: StreamHub): void {
  fastify.get("/api/v1/stream/:discussionId", async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      await openStream(app, hub, req, reply);
    } catch (err) {
      if (reply.raw.headersSent) {
        req.log.error({ err }, "stream failed after it started");
        reply.raw.destroy();
        return;
      }
      const known = knownFailure(err);
      if (known) return sendProblem(reply, known);
      req.log.error({ err }, "stream failed to start");
      return sendProblem(reply, internalError());
    }
  });
}

async function openStream(app: AppServices, hub: StreamHub, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const discussionId = (req.params as { discussionId?: string }).discussionId ?? "";
  if (!DISCUSSION_ID_RE.test(discussionId)) {
    throw errors.invalidParameter([{ path: "discussionId", message: DISCUSSION_ID_RULE }]);
  }
  const query = req.query as Query;
  const ticket = str(query, "ticket");
  const token = str(query, "token");
  const after = lastEventId(req.headers["last-event-id"], str(query, "lastEventId"));

  const headerAuth = Boolean(req.headers["x-api-key"] || req.headers.authorization);
  // ?token= is an API key in the query string: deprecated (it ends up in logs and histories).
  const viaToken = !headerAuth && !ticket && token !== undefined;
  if (viaToken) reply.headers({ Deprecation: "true", Sunset: app.config.TOKEN_SUNSET });

  const ctx = await createRequestContext(app, viaToken ? { ...req.headers, "x-api-key": token } : req.headers, { method: "GET" });
  const caller = await streamCaller(ctx, {
    discussionId,
    ticket: headerAuth ? undefined : ticket,
    viaQueryToken: viaToken,
    lastEventId: after,
    origin: req.headers.origin,
  });
  const sink = new SseSink(reply.raw, {
    // what the reply already carries (CORS for an allowed origin, Deprecation/Sunset) goes out with
    // the stream's own head, which is written on the raw socket
    headers: sseHeaders(replyHeaders(reply)),
    maxBufferedBytes: hub.options.maxBufferedBytes,
    begin: hijacker(reply),
    onOverflow: overflowReporter(app, hub, caller.tenantId, discussionId),
  });
  await hub.open(
    {
      tenantId: caller.tenantId,
      discussionId,
      viewer: caller.viewer,
      after,
      settings: caller.settings,
      ticket: caller.ticket,
      redeem: caller.redeem,
    },
    sink,
  );
}

function replyHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  const headers = reply.getHeaders();
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined) out[k] = String(v);
  }
  return out;
}

// Closures made outside openStream, so a long-lived stream does not keep its request's objects alive.
const hijacker = (reply: FastifyReply) => () => void reply.hijack();

function overflowReporter(app: AppServices, hub: StreamHub, tenantId: string, discussionId: string) {
  return () => {
    hub.noteOverflow();
    app.log.info({ tenantId, discussionId }, "stream client fell behind its buffer bound; disconnected");
  };
}

/** `Last-Event-ID` (set by EventSource on reconnect) wins over `?lastEventId=`; absent = live only. */
function lastEventId(header: string | string[] | undefined, param: string | undefined): number | null {
  const h = Array.isArray(header) ? header[0] : header;
  const [raw, path] = h !== undefined && h.trim() !== "" ? [h.trim(), "Last-Event-ID"] : [param, "lastEventId"];
  if (raw === undefined) return null;
  if (!/^\d{1,15}$/.test(raw)) throw errors.invalidParameter([{ path, message: "must be a non-negative integer (an event seq)" }]);
  return Number(raw);
}
