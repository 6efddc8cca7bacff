// RFC 9457 problem documents for every REST error.
import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import { AppError, errors } from "../lib/errors.js";
import { isBadTextError, isDependencyDown } from "../db/failures.js";

export const PROBLEM_TYPE = "application/problem+json";

/** The problem document's body: the error's fields and the request id. */
export const problemBody = (err: AppError, requestId: string) => JSON.stringify({ ...err.toProblem(), requestId });

export function sendProblem(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.status(err.status).type(PROBLEM_TYPE).send(problemBody(err, reply.request.id));
}

/** The same answer on a bare response (routes served before fastify): `headers` go out with it. */
export function writeProblem(res: ServerResponse, err: AppError, requestId: string, headers: Record<string, string>): void {
  const body = problemBody(err, requestId);
  res.writeHead(err.status, {
    ...headers,
    ...err.headers,
    "Content-Type": `${PROBLEM_TYPE}; charset=utf-8`, // as fastify writes it for the other routes
    "Content-Length": String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/**
 * The problem for a failure that is not a bug of ours: a stalled or unreachable database (503
 * unavailable) or text the database refuses (a NUL byte: 400). Null for anything else (→ 500).
 */
export function knownFailure(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (isDependencyDown(err)) return errors.unavailable("The database is unavailable; try again shortly.");
  if (isBadTextError(err)) {
    return new AppError(400, "invalid_parameter", "A value contains a NUL byte or a character the database cannot store.");
  }
  return null;
}

export const internalError = () => new AppError(500, "internal_error", "Something went wrong on our side; it has been logged.");
