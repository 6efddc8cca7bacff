// RFC 9457 problem documents for every REST error.
import type { FastifyReply } from "fastify";
import { AppError, errors } from "../lib/errors.js";
import { isBadTextError, isDependencyDown } from "../db/errors.js";

export function sendProblem(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  const problem = { ...err.toProblem(), requestId: reply.request.id };
  return reply.status(err.status).type("application/problem+json").send(JSON.stringify(problem));
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
