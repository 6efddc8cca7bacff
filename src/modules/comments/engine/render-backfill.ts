// Renders the bodies of comments written before bodies were stored rendered (comments.body_html
// NULL): run at start-up, after the migrations, before the server answers. Every tenant's comments in
// id order, a batch at a time, each rendered as its tenant's formatting settings say now
// (src/lib/markdown.ts). It crosses tenants, so it is an engine. Safe to run from many instances at
// once and again: a row is written only while it is still unrendered and its body is the one read
// (an edit meanwhile stored its own rendering). comments_body_unrendered_idx (partial: only the
// unrendered rows) makes a start with nothing to do one index probe.
import type { Sql } from "../../../db/sql.js";
import { renderBody, type FormattingOptions } from "../../../lib/markdown.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";

/** rows read and written per statement */
const BATCH = 500;

const UNRENDERED = `SELECT c.id, c.tenant_id, c.body FROM comments c
  WHERE c.body_html IS NULL AND c.id > $1 ORDER BY c.id LIMIT ${BATCH}`;

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
    const rows = await sql.query<{ id: string; tenant_id: string; body: string }>(UNRENDERED, [after]);
    if (!rows.length) return written;
    const rendered = [];
    for (const r of rows) {
      rendered.push({
        i: r.id,
        t: r.tenant_id,
        b: r.body,
        h: r.body === "" ? "" : renderBody(r.body, await formattingOf(r.tenant_id)).html,
      });
    }
    await sql.query(WRITE, [JSON.stringify(rendered)]);
    written += rows.length;
    after = rows[rows.length - 1]!.id;
  }
}
