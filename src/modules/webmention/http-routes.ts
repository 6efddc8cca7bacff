// POST /webmention (contract section 24; W3C Webmention): a form of `source` and `target`
// (application/x-www-form-urlencoded, at most 8 KiB), no key: the target names the site. Answers 202
// once the verification is queued (engine/receive.ts), 400 for what the spec calls a bad request
// (problem documents: invalid_parameter, webmention_target_unsupported, webmention_source_blocked),
// 415 for another body type, 429 past the sender address's budget or every site's budget for the
// source's domain.
import type { FastifyInstance, FastifyReply } from "fastify";
import type { AppServices } from "../../context/services.js";
import { AppError, errors } from "../../lib/errors.js";
import { internalError, knownFailure, sendProblem } from "../../http/problem.js";
import { checkMention, receiveMention } from "./engine/receive.js";

export function mountWebmention(fastify: FastifyInstance, app: AppServices): void {
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 8192 }, (_req, body, done) =>
      done(null, new URLSearchParams(String(body))),
    );
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: 8192 }, (_req, _body, done) => done(null, undefined));
    const fail = (reply: FastifyReply, err: unknown) => {
      const known = err instanceof AppError ? err : knownFailure(err);
      if (known) return sendProblem(reply, known);
      reply.request.log.error({ err }, "webmention failed");
      return sendProblem(reply, internalError());
    };
    scope.post<{ Body: unknown }>("/webmention", async (req, reply) => {
      try {
        if (!(req.body instanceof URLSearchParams)) {
          throw errors.unsupportedMediaType("Send source and target as application/x-www-form-urlencoded.");
        }
        await receiveMention(app, checkMention(req.body), req.ip);
      } catch (err) {
        return fail(reply, err);
      }
      return reply
        .code(202)
        .type("text/plain; charset=utf-8")
        .send("Accepted: the source will be fetched and checked for a link to the target.\n");
    });
  });
}
