// /embed/demo (contract section 14): a page a newcomer opens after `npm start` to see the comment
// thread working against the embedded database, with a sign-in stub; the thread is the indexable
// fragment (src/modules/indexable/) the page's server includes, upgraded in place by thread.js. Mounted unless
// NODE_ENV=production (there only with EMBED_DEMO=1). Its tenant: src/modules/embed-demo/engine/demo-tenant.ts.
import type { FastifyInstance } from "fastify";
import type { AppServices } from "../../context/services.js";
import { AppError } from "../../lib/errors.js";
import { renderForTenant } from "../indexable/engine/render.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { publicBase } from "../../http/public-base.js";
import { DEMO_DISCUSSION, demoOriginAllower, demoTenantSource } from "./engine/demo-tenant.js";
import { checkDemoName, demoReaderId, signDemoIdentity } from "./identity.js";
import { DEMO_CSS, DEMO_JS, demoHtml } from "./page.js";

export const demoEnabled = (config: { NODE_ENV: string; EMBED_DEMO: boolean }) => config.NODE_ENV !== "production" || config.EMBED_DEMO;

const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function mountEmbedDemo(fastify: FastifyInstance, app: AppServices): void {
  if (!demoEnabled(app.config)) return;
  const demoTenant = demoTenantSource(app, fastify);
  const allowOrigin = demoOriginAllower(app, fastify);

  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/embed/demo",
    what: "embed demo",
    handler: async (req, reply) => {
      const demo = await demoTenant();
      const origin = new URL(publicBase(app.config, req)).origin;
      await allowOrigin(demo.tenantId, origin);
      const request = { discussionId: DEMO_DISCUSSION, sort: null, lang: null, cursor: null, parentId: null };
      // the page's server includes the thread's HTML; a discussion gone from under the demo leaves the plain element
      const thread = await renderForTenant(app, demo.tenantId, { ...request, key: demo.publishableKey, apiBase: origin }).catch(
        (err: unknown) => {
          if (err instanceof AppError && err.status === 404) return null;
          throw err;
        },
      );
      return reply
        .header("Content-Security-Policy", PAGE_CSP)
        .header("Cache-Control", "no-store")
        .type("text/html; charset=utf-8")
        .send(demoHtml({ origin, publishableKey: demo.publishableKey, discussionId: DEMO_DISCUSSION, thread }));
    },
  });
  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/embed/demo/demo.css",
    what: "embed demo",
    handler: (_req, reply) => reply.header("Cache-Control", "no-cache").type("text/css; charset=utf-8").send(DEMO_CSS),
  });
  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/embed/demo/demo.js",
    what: "embed demo",
    handler: (_req, reply) => reply.header("Cache-Control", "no-cache").type("text/javascript; charset=utf-8").send(DEMO_JS),
  });
  // the sign-in stub: a name in, the demo tenant's identity assertion for it out
  mountPlainRoute<{ Body: { name?: unknown } | undefined }>(fastify, app, {
    method: "POST",
    url: "/embed/demo/sign-in",
    what: "embed demo",
    handler: async (req, reply) => {
      const name = checkDemoName(req.body?.name);
      const demo = await demoTenant();
      return reply
        .header("Cache-Control", "no-store")
        .send({ token: await signDemoIdentity(demo.identitySecret, name), readerId: demoReaderId(name), name });
    },
  });
}
