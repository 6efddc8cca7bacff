// The index diet's migration (docs/scaling.md, "What a post writes") on a database the release before
// left: the comments written before bodies were stored rendered listed for the start-up render, the
// search documents given their comment's has_links, an erased reader's comment kept for its replies
// given a document without words (a search by filters walks the documents), a deleted comment none;
// the indexes a post no longer writes gone, and the queue's index holding deleted comments. A database
// of its own, migrated as the release before left it, then to this release.
import { describe, expect, it } from "vitest";
import { migratePostgres } from "../src/db/migrate.js";
import { databaseBefore } from "./support/migration-database.js";

const migrated = databaseBefore("index_diet", "20261128154513_index_diet");
const direct = migrated.url;
const db = () => migrated.db();

const indexes = async () =>
  (
    await migrated
      .db()
      .query<{ name: string; def: string }>(
        `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename IN ('comments', 'events', 'comment_search') ORDER BY 1`,
      )
  ).rows;

describe("the index diet's migration", () => {
  it("lists the unrendered comments, gives the documents has_links and the erased comments documents without words, and drops what a post no longer writes", async () => {
    const before = (await indexes()).map((i) => i.name);
    expect(before).toEqual(
      expect.arrayContaining([
        "comments_tenant_newest_idx",
        "comments_links_idx",
        "comments_body_unrendered_idx",
        "events_tenant_id_occurred_at_idx",
      ]),
    );
    await db().query(`INSERT INTO tenants (id, name, identity_secret_enc) VALUES ('ten_d', 'D', 'x')`);
    await db().query(`INSERT INTO readers (tenant_id, id, name) VALUES ('ten_d', 'ann', 'Ann'), ('ten_d', '', '[erased]')`);
    await db().query(`INSERT INTO discussions (tenant_id, id) VALUES ('ten_d', 'd1')`);
    const comment = (id: string, author: string, body: string, html: string | null, links: boolean, status: string) =>
      db().query(
        `INSERT INTO comments (id, tenant_id, discussion_id, author_id, body, body_html, has_links, status, created_at)
         VALUES ($1, 'ten_d', 'd1', $2, $3, $4, $5, $6::"CommentStatus", now())`,
        [id, author, body, html, links, status],
      );
    await comment("c-old", "ann", "written before bodies were rendered", null, false, "approved");
    await comment("c-link", "ann", "see https://a.example", '<p>see <a href="https://a.example">a</a></p>', true, "approved");
    await comment("c-erased", "", "[erased]", "<p>[erased]</p>", false, "approved");
    await comment("c-gone", "", "", "", false, "deleted");
    // the documents the projector had written: every comment but the deleted and the erased ones
    await db().query(
      `INSERT INTO comment_search (tenant_id, discussion_id, comment_id, author_id, created_at, vector)
       SELECT tenant_id, discussion_id, id, author_id, created_at, eng_search_vector(body) FROM comments
        WHERE tenant_id = 'ten_d' AND status <> 'deleted' AND author_id <> ''`,
    );

    await migratePostgres(direct);

    expect((await db().query(`SELECT tenant_id, comment_id FROM comment_render_backlog`)).rows).toEqual([
      { tenant_id: "ten_d", comment_id: "c-old" },
    ]);
    const docs = await migrated
      .db()
      .query<{ comment_id: string; has_links: boolean; words: string }>(
        `SELECT comment_id, has_links, vector::text AS words FROM comment_search WHERE tenant_id = 'ten_d' ORDER BY comment_id`,
      );
    expect(docs.rows).toEqual([
      { comment_id: "c-erased", has_links: false, words: "" },
      { comment_id: "c-link", has_links: true, words: expect.stringContaining("'see'") },
      { comment_id: "c-old", has_links: false, words: expect.stringContaining("'rendered'") },
    ]);
    const after = await indexes();
    const names = after.map((i) => i.name);
    for (const gone of [
      "comments_tenant_newest_idx",
      "comments_links_idx",
      "comments_body_unrendered_idx",
      "events_tenant_id_occurred_at_idx",
    ]) {
      expect(names).not.toContain(gone);
    }
    expect(names).toContain("comment_search_links_idx");
    expect(after.find((i) => i.name === "comments_queue_idx")?.def).toMatch(/pending.*rejected.*deleted/);
    expect(after.find((i) => i.name === "comments_shadow_idx")?.def).toMatch(/WHERE \(status = 'rejected'/);
    // and the projector's function writes them the same way: the erased comment's words stay none
    await db().query(`SELECT eng_search_index('ten_d', 'd1', NULL)`);
    expect(
      (
        await migrated
          .db()
          .query(`SELECT comment_id, has_links, vector::text AS words FROM comment_search WHERE tenant_id = 'ten_d' ORDER BY comment_id`)
      ).rows,
    ).toEqual(docs.rows);
  });
});
