// Read-your-writes on the answers (contract section 26): every write's answer carries
// X-Service-Consistency; with read replicas configured, the primary's WAL position read after the write committed,
// sealed for the writer's tenant (src/db/replicas/consistency-token.ts), and its caller's credentials are noted as a recent writer
// (src/context/read-routing.ts: its reads stay on the primary for DATABASE_REPLICA_STICKY_MS).
// A write is an answer below 400 to a POST, PUT, PATCH or DELETE, except on /graphql, where it is a
// request that ran a mutation (a query sent by POST writes nothing): yoga's pipeline marks those
// (`WriteMarks`, given to src/http/graphql/server.ts), and the idempotent path runs its mutations there.
import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";
import type { AppServices } from "../context/request.js";
import { CONSISTENCY_HEADER, PRIMARY_TOKEN } from "../db/replicas/consistency-token.js";
import { resolvePrincipal } from "../context/resolve-principal.js";

/** The /graphql requests that ran a mutation, for the answer's hook. */
export interface WriteMarks {
  mark(req: IncomingMessage): void;
  marked(req: IncomingMessage): boolean;
}

export function createWriteMarks(): WriteMarks {
  const marks = new WeakSet<IncomingMessage>();
  return { mark: (req) => void marks.add(req), marked: (req) => marks.has(req) };
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Adds the token to every write's answer. Without replicas every read is the primary's: the token is
 * then `PRIMARY_TOKEN` (a position no replica reaches), so the answer says the same as with replicas
 * without a round trip to read the position, and a token kept from then, sent after replicas are
 * configured, still reads from the primary.
 */
export function mountConsistency(fastify: FastifyInstance, app: AppServices, marks: WriteMarks): void {
  if (app.db.replicas.size === 0) {
    fastify.addHook("onSend", (req, reply, payload, done) => {
      if (WRITE_METHODS.has(req.method) && reply.statusCode < 400 && (!req.url.startsWith("/graphql") || marks.marked(req.raw)))
        reply.header(CONSISTENCY_HEADER, PRIMARY_TOKEN);
      done(null, payload);
    });
    return;
  }
  fastify.addHook("onSend", async (req, reply, payload) => {
    if (!WRITE_METHODS.has(req.method) || reply.statusCode >= 400) return payload;
    if (req.url.startsWith("/graphql") && !marks.marked(req.raw)) return payload;
    app.recentWriters.wrote(req.headers);
    try {
      // sealed for the writer's tenant (its credentials again, from the auth cache); a write without
      // one (a hosted form's post) answers the primary's token
      const tenantId = (await resolvePrincipal(app, req.headers, { method: req.method }).catch(() => null))?.principal.tenantId;
      const position = await app.db.replicas.positionAfterWrite();
      reply.header(CONSISTENCY_HEADER, tenantId ? app.consistencyTokens.encode(position, tenantId) : PRIMARY_TOKEN);
    } catch (err) {
      // the primary did not say its position: no token (the writer's sticky window still holds)
      req.log.warn({ err }, "no consistency token: the primary's WAL position was not read");
    }
    return payload;
  });
}
