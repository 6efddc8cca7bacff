// Renders the bodies of comments written before bodies were stored rendered (comments.body_html
// NULL): run at start-up, after the migrations, before the server answers. The comments to render are
// those the migration that dropped their partial index listed in comment_render_backlog (no write
// leaves a body unrendered since: a post, an edit and an import render it), a batch at a time in id
// order, each rendered as its tenant's formatting settings say now (src/lib/markdown.ts), its entry
// then taken off the list. It crosses tenants, so it is an engine. Safe to run from many instances at
// once and again: a row is written only while it is still unrendered and its body is the one read (an
// edit meanwhile stored its own rendering). A start with nothing to do reads an empty table.
import type { Sql } from "../../../db/sql.js";
import { renderBody, type FormattingOptions } from "../../../lib/markdown.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";

/** rows read and written per statement */
const BATCH = 500;

/** the next listed comments (b.comment_id > $1), with the body of those still unrendered (null: rendered meanwhile, or gone) */
const LISTED = `SELECT b.comment_id AS id, b.tenant_id, c.body FROM comment_render_backlog b
  LEFT JOIN comments c ON c.tenant_id = b.tenant_id AND c.id = b.comment_id AND c.body_html IS NULL
  WHERE b.comment_id > $1 ORDER BY b.comment_id LIMIT ${BATCH}`;

const DONE = `DELETE FROM comment_render_backlog b USING json_to_recordset($1::json) AS v(i text, t text) WHERE b.tenant_id = v.t AND b.comment_id = v.i`;

const TENANT_SETTINGS = `SELECT t.settings FROM tenants t WHERE t.id = $1`;

const WRITE = `UPDATE comments c SET body_html = v.h, has_links = eng_has_links(v.h)
  FROM json_to_recordset($1::json) AS v(i text, t text, b text, h text)
 WHERE c.tenant_id = v.t AND c.id = v.i AND c.body_html IS NULL AND c.body = v.b`;

/** Renders every unrendered comment; answers how many it wrote. */
export async function renderUnrenderedBodies(sql: Sql): Promise<number> {
  const formatting = new Map<string, FormattingOptions>();
  const formattingOf = async (tenantId: string) => {
    let f = formatting.get(tenantId);
    if (!f) {
      const [row] = await sql.query<{ settings: unknown }>(TENANT_SETTINGS, [tenantId]);
      formatting.set(tenantId, (f = resolveSettings(row?.settings).formatting));
    }
    return f;
  };
  let after = "";
  let written = 0;
  for (;;) {
    const rows = await sql.query<{ id: string; tenant_id: string; body: string | null }>(LISTED, [after]);
    if (!rows.length) return written;
    const rendered = [];
    for (const r of rows) {
      if (r.body === null) continue;
      rendered.push({
        i: r.id,
        t: r.tenant_id,
        b: r.body,
        h: r.body === "" ? "" : renderBody(r.body, await formattingOf(r.tenant_id)).html,
      });
    }
    await sql.query(WRITE, [JSON.stringify(rendered)]);
    await sql.query(DONE, [JSON.stringify(rows.map((r) => ({ i: r.id, t: r.tenant_id })))]);
    written += rendered.length;
    after = rows[rows.length - 1]!.id;
  }
}
