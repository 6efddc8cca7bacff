// RFC 9457 problem documents for every REST error.
import type { FastifyReply } from "fastify";
import { AppError } from "../lib/errors.js";

export function sendProblem(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.status(err.status).type("application/problem+json").send(JSON.stringify(err.toProblem()));
}

export const internalError = () =>
  new AppError(500, "internal_error", "Something went wrong on our side; it has been logged.");
