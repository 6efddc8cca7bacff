// A body's preview (contract section 18): what a comment with that body would show, rendered as the
// tenant's formatting settings say (src/lib/markdown.ts), after the same body rules as a post
// (checkBody in src/modules/comments/write.ts: the same limit, the same 422). Nothing is stored.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { renderBody } from "../../lib/markdown.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { checkBody } from "../comments/write.js";

export interface BodyPreview {
  bodyHtml: string;
  /** how many links the rendering shows (what `safety.maxLinks` counts) */
  links: number;
}

export async function previewBody(ctx: RequestContext, body: string): Promise<BodyPreview> {
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  const rendered = renderBody(checkBody({ body }, settings.maxBodyLength), settings.formatting);
  return { bodyHtml: rendered.html, links: rendered.links };
}
