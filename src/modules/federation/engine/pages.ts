// Where a browser asking for an actor's, a Note's or an Article's id (Accept: text/html) is sent: the
// site (the actor's `url`: settings federation.url, else the first allowed origin), the comment's
// permalink on its page (`<url>#comment-<id>`), the discussion's page; null when the object is not
// served (federation off, no such comment, not approved, no url, a site without a url).
import type { AppServices } from "../../../context/request.js";
import { federatingTenant } from "./tenants.js";
import { commentPermalink, readDiscussion, readNote } from "./objects.js";

const NOTE_PATH = /^\/ap\/actors\/([^/]+)\/notes\/([^/?#]+)/;
const ACTOR_PATH = /^\/ap\/actors\/([^/?#]+)\/?$/;
const ARTICLE_PATH = /^\/ap\/actors\/([^/]+)\/articles\/([^/?#]+)/;

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export async function pageOf(app: AppServices, path: string): Promise<string | null> {
  const actor = ACTOR_PATH.exec(path);
  if (actor) return (await federatingTenant(app, decode(actor[1]!)))?.site ?? null;
  const note = NOTE_PATH.exec(path);
  if (note) {
    const [tenantId, commentId] = [decode(note[1]!), decode(note[2]!)];
    if (!(await federatingTenant(app, tenantId))) return null;
    const c = await readNote(app.stores(tenantId).sql, commentId);
    return c && c.status === "approved" && c.discussionUrl ? commentPermalink(c.discussionUrl, c.id) : null;
  }
  const article = ARTICLE_PATH.exec(path);
  if (article) {
    const tenantId = decode(article[1]!);
    if (!(await federatingTenant(app, tenantId))) return null;
    return (await readDiscussion(app.stores(tenantId).sql, decode(article[2]!)))?.url ?? null;
  }
  return null;
}
