// POST /api/v1/discussions/{id}/federate (manage_settings; GraphQL federateDiscussion): an existing
// discussion with a url announced to the tenant's followers (Create(Article)), as a new one is on its
// own. The announcement is queued, not sent here (eng_federate_discussion: one job of the outbound
// queue, made into its deliveries by engine/outbound.ts), and from then on its comments' events are
// sent too. Its comments before now are not sent.
import { loadTenant, store, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { recordAudit } from "../audit/audit.js";
import { federationServed } from "./paths.js";

export interface FederatedDiscussion {
  discussionId: string;
  /** the Article's id */
  articleId: string;
  /** followers its announcement is queued for, as now counted */
  followers: number;
}

export async function federateDiscussion(ctx: RequestContext, id: string): Promise<FederatedDiscussion> {
  const tenant = await loadTenant(ctx);
  const federation = resolveSettings(tenant.settings).federation;
  if (!federation.enabled || !federation.handle) throw errors.federationDisabled();
  if (!federationServed(ctx.app.config)) throw errors.federationUnavailable();
  const [d] = await store(ctx).sql.query<{ url: string | null }>(`SELECT url FROM discussions WHERE tenant_id = $1 AND id = $2`, [id]);
  if (!d) throw errors.notFound("Discussion");
  if (!d.url) throw errors.discussionWithoutUrl();
  await store(ctx).sql.query(`SELECT eng_federate_discussion($1, $2, true, $3::timestamptz)`, [id, ctx.app.clock.now()]);
  const [n] = await store(ctx).sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM federation_followers WHERE tenant_id = $1`, []);
  await recordAudit(ctx, "discussion.federate", { type: "discussion", id });
  // PUBLIC_URL with its path, if any (the ids are under it: paths.ts), without a trailing slash
  const origin = (ctx.app.config.PUBLIC_URL ?? "").replace(/\/+$/, "");
  return {
    discussionId: id,
    articleId: `${origin}/ap/actors/${encodeURIComponent(tenant.id)}/articles/${encodeURIComponent(id)}`,
    followers: n?.n ?? 0,
  };
}
