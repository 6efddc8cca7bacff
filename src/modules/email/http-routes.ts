// The unsubscribe link's two answers (contract section 15):
//   POST /api/v1/unsubscribe/{token}   body `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded,
//                                      as RFC 8058 mail clients send it; the one write that is not JSON)
//                                      → 200: the reader's reply emails (or the operator's digest) are off;
//                                      any other body (none, other fields, JSON, another type) → 400
//                                      one_click_required, nothing changed
//   GET  /api/v1/unsubscribe/{token}   → a small page whose button sends that same POST
// No key, no sign-in: the signed token is the authority (src/modules/email/engine/unsubscribe.ts).
import type { FastifyInstance } from "fastify";
import type { AppServices } from "../../context/services.js";
import { errors } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { unsubscribe, verifyUnsubscribeToken, type UnsubscribeKind } from "./engine/unsubscribe.js";

const PAGE_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
};

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d2430}button{font:inherit;padding:.5rem 1rem;border:0;border-radius:6px;background:#2457c5;color:#fff;cursor:pointer}</style>
</head><body><main><h1>${title}</h1>${body}</main></body></html>`;

/** RFC 8058's body, List-Unsubscribe=One-Click, and nothing else. */
const isOneClick = (body: unknown): boolean =>
  body instanceof URLSearchParams && [...body.keys()].length === 1 && body.get("List-Unsubscribe") === "One-Click";

export function mountUnsubscribe(fastify: FastifyInstance, app: AppServices): void {
  void fastify.register(async (scope) => {
    // RFC 8058's body; small, and parsed only here. Any other type (JSON included) is read as nothing
    // a POST takes, so it is answered 400 by the route rather than parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 1024 }, (_req, body, done) =>
      done(null, new URLSearchParams(String(body))),
    );
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: 1024 }, (_req, _body, done) => done(null, undefined));
    // what a link stops, in the words of its page
    const words = (kind: UnsubscribeKind) =>
      kind === "moderation"
        ? { ask: "Stop moderation digests?", what: "<p>You will no longer get a digest of comments waiting for review.</p>" }
        : { ask: "Stop reply emails?", what: "<p>You will no longer get an email when someone replies to your comments.</p>" };

    mountPlainRoute<{ Params: { token: string } }>(scope, app, {
      method: "GET",
      url: "/api/v1/unsubscribe/:token",
      what: "unsubscribe",
      handler: (req, reply) => {
        const w = words(verifyUnsubscribeToken(app, req.params.token).kind);
        return reply
          .headers(PAGE_HEADERS)
          .type("text/html; charset=utf-8")
          .send(
            page(
              w.ask,
              `${w.what}
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
            ),
          );
      },
    });

    mountPlainRoute<{ Params: { token: string }; Body: unknown }>(scope, app, {
      method: "POST",
      url: "/api/v1/unsubscribe/:token",
      what: "unsubscribe",
      handler: async (req, reply) => {
        const claims = verifyUnsubscribeToken(app, req.params.token);
        if (!isOneClick(req.body)) throw errors.oneClickRequired();
        await unsubscribe(app, claims);
        return reply
          .headers(PAGE_HEADERS)
          .type("text/html; charset=utf-8")
          .send(page("Unsubscribed", words(claims.kind).what));
      },
    });
  });
}
