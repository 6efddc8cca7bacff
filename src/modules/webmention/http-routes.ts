// POST /webmention (contract section 24; W3C Webmention): a form of `source` and `target`
// (application/x-www-form-urlencoded, at most 8 KiB), no key: the target names the site. Answers 202
// once the verification is queued (engine/receive.ts), 400 for what the spec calls a bad request
// (problem documents: invalid_parameter, webmention_target_unsupported, webmention_source_blocked),
// 404 for the page of a site that does not federate (contract section 24), 415 for another body type, 429 past the sender address's budget or every site's budget for the
// source's domain.
import type { FastifyInstance } from "fastify";
import type { AppServices } from "../../context/services.js";
import { errors } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { checkMention, receiveMention } from "./engine/receive.js";

export function mountWebmention(fastify: FastifyInstance, app: AppServices): void {
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 8192 }, (_req, body, done) =>
      done(null, new URLSearchParams(String(body))),
    );
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: 8192 }, (_req, _body, done) => done(null, undefined));
    mountPlainRoute(scope, app, {
      method: "POST",
      url: "/webmention",
      what: "webmention",
      handler: async (req, reply) => {
        if (!(req.body instanceof URLSearchParams)) {
          throw errors.unsupportedMediaType("Send source and target as application/x-www-form-urlencoded.");
        }
        await receiveMention(app, checkMention(req.body), req.ip);
        return reply
          .code(202)
          .type("text/plain; charset=utf-8")
          .send("Accepted: the source will be fetched and checked for a link to the target.\n");
      },
    });
  });
}
