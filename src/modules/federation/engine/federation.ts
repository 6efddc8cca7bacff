// The Fedify federation of this service (contract section 24; docs/fediverse.md): WebFinger, NodeInfo,
// each federating tenant's actor (a Service: its handle, its name, inbox, shared inbox, outbox,
// followers, an RSA key and an Ed25519 key), its discussions as Articles and its comments as Notes,
// and the inbox's listeners (inbox.ts). Fedify does the protocol — routing, content negotiation,
// JSON-LD, WebFinger, replay; the inbox's HTTP signatures are verified before it by the mount with
// Fedify's own functions (signer.ts, ../http-routes.ts) — and this file says what
// each of the tenant's documents holds. Built once by the composition root (src/app.ts); served by
// the Fastify mount (../http-routes.ts); its documents fetched through the guarded loader
// (document-loader.ts) and its state in our database (kv-store.ts).
import { createFederation, type DocumentLoader, type Federation, type KvStore } from "@fedify/fedify";
import { Article, Endpoints, Note, type Recipient, Service, Image } from "@fedify/vocab";
import { SERVICE_VERSION } from "../../../lib/version.js";
import { federationPaths } from "../paths.js";
import type { FederationData } from "./context.js";
import { federatingTenant, tenantOfHandle, type FederatingTenant } from "./tenants.js";
import { articleOf, escapeHtml, isRemoteAuthor, noteOf, readDiscussion, readNote } from "./objects.js";
import { actorIconOf } from "../../../lib/actor-icon.js";
import { listenInbox } from "./inbox.js";
import { outboxCount, outboxPage } from "./outbox.js";
import { mentionOf } from "./mentions.js";

export interface FederationOptions {
  /** PUBLIC_URL's origin: every id is built on it (unset: the address the server listens on, as the request's URL is built: src/modules/federation/http-routes.ts) */
  origin: string | undefined;
  /** PUBLIC_URL's path ("" at the host's root): every path but the well-known ones is under it */
  pathPrefix: string;
  kv: KvStore;
  /** the guarded loader of remote documents (document-loader.ts) */
  loader: DocumentLoader;
}

/** The actor's profile text as HTML: settings federation.summary (plain text, escaped), else a sentence naming the site. */
function actorSummary(t: FederatingTenant): string {
  const text = t.settings.summary ?? `Comments of ${t.tenant.name}: follow to see its discussions, and reply to join them.`;
  return `<p>${escapeHtml(text).replaceAll("\n", "<br>")}</p>`;
}

/** The actor's icon from settings federation.icon, parsed again (src/lib/actor-icon.ts): only its printed URL and media type are used. */
function actorImage(raw: string | null): Image | null {
  const icon = raw === null ? null : actorIconOf(raw);
  return icon ? new Image({ url: new URL(icon.href), ...(icon.mediaType ? { mediaType: icon.mediaType } : {}) }) : null;
}

export const FEDERATION_USER_AGENT = `engagement-service/${SERVICE_VERSION} (ActivityPub; Fedify)`;

export function buildFederation(opts: FederationOptions): Federation<FederationData> {
  const PATHS = federationPaths(opts.pathPrefix);
  const { loader } = opts;
  const federation = createFederation<FederationData>({
    kv: opts.kv,
    ...(opts.origin ? { origin: opts.origin } : {}),
    documentLoaderFactory: () => loader,
    contextLoaderFactory: () => loader,
    authenticatedDocumentLoaderFactory: () => loader,
    userAgent: undefined,
    // the mount verifies every inbound activity's HTTP signature before Fedify reads it, and takes its
    // Linked Data signature off (signer.ts): Fedify's inbox would verify that one first, over the
    // sender's graph, and check the HTTP signature against a body no longer the one that was signed
    skipSignatureVerification: true,
  });

  federation
    .setActorDispatcher(PATHS.actor, async (ctx, identifier) => {
      const t = await federatingTenant(ctx.data.app, identifier);
      if (!t) return null;
      const keys = await ctx.getActorKeyPairs(identifier);
      return new Service({
        id: ctx.getActorUri(identifier),
        preferredUsername: t.settings.handle,
        name: t.tenant.name,
        summary: actorSummary(t),
        url: t.site ? new URL(t.site) : null,
        icon: actorImage(t.settings.icon),
        inbox: ctx.getInboxUri(identifier),
        outbox: ctx.getOutboxUri(identifier),
        followers: ctx.getFollowersUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        publicKey: keys[0]?.cryptographicKey ?? null,
        assertionMethods: keys.map((k) => k.multikey),
        manuallyApprovesFollowers: false,
        discoverable: true,
      });
    })
    .setKeyPairsDispatcher(async (ctx, identifier) => {
      if (!(await federatingTenant(ctx.data.app, identifier))) return [];
      const keys = await ctx.data.keys.keysOf(identifier);
      return [keys.rsa, keys.ed25519];
    })
    .mapHandle((ctx, username) => tenantOfHandle(ctx.data.app, username));

  federation
    .setFollowersDispatcher(PATHS.followers, async (ctx, identifier, cursor) => {
      if (!(await federatingTenant(ctx.data.app, identifier))) return null;
      // the cursors it issues are offsets ("0", "50", …): anything else (a fraction, past int4) is no page of it
      if (cursor !== null && !/^\d{1,9}$/.test(cursor)) return { items: [], nextCursor: null };
      const offset = cursor === null ? 0 : Number(cursor);
      const rows = await ctx.data.app
        .stores(identifier)
        .sql.query<{ actorId: string; inbox: string }>(
          `SELECT actor_id AS "actorId", inbox FROM federation_followers WHERE tenant_id = $1 ORDER BY created_at, actor_id OFFSET $2 LIMIT 51`,
          [offset],
        );
      const items: Recipient[] = rows.slice(0, 50).map((r) => ({ id: new URL(r.actorId), inboxId: new URL(r.inbox), endpoints: null }));
      return { items, nextCursor: rows.length > 50 ? String(offset + 50) : null };
    })
    .setFirstCursor(() => "0")
    .setCounter(async (ctx, identifier) => {
      const [row] = await ctx.data.app
        .stores(identifier)
        .sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM federation_followers WHERE tenant_id = $1`, []);
      return row?.n ?? 0;
    });

  // the outbox: the actor's Create(Article) activities, newest first, in pages (outbox.ts)
  federation
    .setOutboxDispatcher(PATHS.outbox, async (ctx, identifier, cursor) =>
      (await federatingTenant(ctx.data.app, identifier)) ? outboxPage(ctx, identifier, cursor ?? "") : null,
    )
    .setFirstCursor(() => "")
    .setCounter((ctx, identifier) => outboxCount(ctx, identifier));

  federation.setObjectDispatcher(Article, PATHS.article, async (ctx, { tenant, discussion }) => {
    if (!(await federatingTenant(ctx.data.app, tenant))) return null;
    const d = await readDiscussion(ctx.data.app.stores(tenant).sql, discussion);
    return d?.url ? articleOf(ctx, tenant, { ...d, url: d.url }) : null;
  });

  federation.setObjectDispatcher(Note, PATHS.note, async (ctx, { tenant, comment }) => {
    if (!(await federatingTenant(ctx.data.app, tenant))) return null;
    const c = await readNote(ctx.data.app.stores(tenant).sql, comment);
    if (!c || c.status !== "approved" || isRemoteAuthor(c.authorId) || !c.discussionUrl) return null;
    return noteOf(ctx, tenant, c, await mentionOf(ctx, c));
  });

  // the server's NodeInfo (the mount answers 404 for it while no tenant federates: ../http-routes.ts)
  federation.setNodeInfoDispatcher(PATHS.nodeinfo, () => ({
    software: { name: "engagement-service", version: SERVICE_VERSION },
    protocols: ["activitypub"],
    openRegistrations: false,
    usage: { users: {}, localPosts: 0, localComments: 0 },
  }));

  listenInbox(federation.setInboxListeners(PATHS.inbox, PATHS.sharedInbox));
  return federation;
}
