// A chat alert's Approve and Reject links (contract section 21), no key: the token is the credential.
//   GET  /moderate/v1/{token} → a confirm page (HTML): the comment, its reader, discussion, status and
//                               reason, and one button; it never acts (chats and mail scanners fetch links)
//   POST /moderate/v1/{token} → the button's form: approves or rejects (the link's own action), once for
//                               the alert's two links (engine/link-actions.ts)
// Problems are pages too, with the catalogue's status and words (src/lib/errors.ts): a link never made
// or altered 404 alert_link_unknown; its alert's decision made (by it or the other link) 410
// alert_link_used, its comment decided since the alert (a moderator, another link, an edit, a
// deletion) 409 alert_link_decided, each saying what became of the comment and who decided; past its 7
// days 410 alert_link_expired; nothing is changed by any of them. The pages are the hosted sign-in's
// (src/modules/sign-in/engine/pages.ts: a strict CSP by nonce, no referrer, not framed, no caching).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/services.js";
import { AppError } from "../../lib/errors.js";
import { knownFailure } from "../../http/problem.js";
import { crossSiteForm } from "../../http/public-base.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { escapeHtml, hostedPage, problemPage, type HostedPage } from "../sign-in/engine/pages.js";
import { useAlertLink, viewAlertLink, type OpenedAlertLink } from "./engine/link-actions.js";
import { describeReason } from "./engine/messages.js";

const sendPage = (reply: FastifyReply, page: HostedPage, status = 200) =>
  reply.status(status).headers(page.headers).type("text/html; charset=utf-8").send(page.html);

const VERBS = { approve: { ask: "Approve", done: "approved" }, reject: { ask: "Reject", done: "rejected" } } as const;

/** A failure as a page: what happened and that nothing changed; a bug (null) is still a 500 problem document (logged). */
function problem(_req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply | null {
  const known = err instanceof AppError ? err : knownFailure(err);
  if (!known) return null;
  for (const [k, v] of Object.entries(known.headers)) reply.header(k, v);
  const decided = known.code === "alert_link_used" || known.code === "alert_link_decided";
  const page = problemPage({ lang: "en", title: decided ? "Already decided" : "This link cannot be used", detail: known.detail });
  return sendPage(
    reply,
    { ...page, html: page.html.replace("</main>", `<p class="hint">${escapeHtml(known.code)}</p></main>`) },
    known.status,
  );
}

/** The confirm page: what the link will do to which comment, and its one button. */
function confirmPage({ link, comment, expiresAt }: OpenedAlertLink): HostedPage {
  const verb = VERBS[link.action];
  const title = comment.discussionTitle ?? comment.discussionId;
  const discussion =
    comment.discussionUrl && /^https?:\/\//.test(comment.discussionUrl)
      ? `<a href="${escapeHtml(comment.discussionUrl)}" rel="noopener noreferrer">${escapeHtml(title)}</a>`
      : escapeHtml(title);
  const excerpt = [...comment.body].length > 1000 ? `${[...comment.body].slice(0, 999).join("")}…` : comment.body;
  return hostedPage({
    lang: "en",
    title: `${verb.ask} this comment?`,
    body: `<p>${escapeHtml(comment.site)}: a comment by <strong>${escapeHtml(comment.readerName)}</strong> (${escapeHtml(comment.readerId)}) in ${discussion}.</p>
<blockquote><p>${escapeHtml(excerpt).replace(/\n/g, "<br>")}</p></blockquote>
<p>Status now: <strong>${escapeHtml(comment.status)}</strong>. ${escapeHtml(describeReason(comment.moderationReason))}.</p>
<form method="post"><button type="submit">${verb.ask} comment</button></form>
<p class="hint">This alert's Approve and Reject links are one decision: the first used decides, once, until ${escapeHtml(expiresAt.toISOString())}.</p>`,
  });
}

export function mountAlertLinks(fastify: FastifyInstance, app: AppServices): void {
  /** Each client address's budget, shared with the hosted sign-in's pages. */
  const admit = (req: FastifyRequest) => app.readerSignIn.perAddress.consume(`moderate\n${req.ip}`);

  mountPlainRoute<{ Params: { token: string } }>(fastify, app, {
    method: "GET",
    url: "/moderate/v1/:token",
    what: "alert link",
    problem,
    handler: async (req, reply) => {
      await admit(req);
      return sendPage(reply, confirmPage(await viewAlertLink(app, req.params.token)));
    },
  });

  // the confirm page's form, in a scope of its own so no JSON route takes a form body (its body is empty)
  void fastify.register(async (scope) => {
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 4096 }, (_req, _body, done) =>
      done(null, null),
    );
    mountPlainRoute<{ Params: { token: string } }>(scope, app, {
      method: "POST",
      url: "/moderate/v1/:token",
      what: "alert link",
      problem,
      handler: async (req, reply) => {
        await admit(req);
        if (crossSiteForm(app.config, req)) {
          return sendPage(
            reply,
            problemPage({
              lang: "en",
              title: "This link cannot be used",
              detail: "Open the link and use its button: a form of another site cannot.",
            }),
            403,
          );
        }
        const { link, comment } = await useAlertLink(app, req.params.token);
        const verb = VERBS[link.action];
        return sendPage(
          reply,
          hostedPage({
            lang: "en",
            title: `Comment ${verb.done}`,
            body: `<p role="status">The comment ${escapeHtml(comment.id)} by ${escapeHtml(comment.author.name)} is now <strong>${escapeHtml(comment.status)}</strong>. The audit log records it as done by this link.</p>`,
          }),
        );
      },
    });
  });
}
