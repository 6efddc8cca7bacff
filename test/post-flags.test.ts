// A post reads two things from rows it reads anyway, and asks the tables behind them only when those
// say so (eng_post_comment): until when the reader's sanction may be in force (readers.sanctioned_until;
// the sanction itself looked for only then) and whether anyone has followed the discussion with `all`
// (discussions.followed; who, eng_follow_enqueue's probe, asked only then). The migrations that add the
// columns fill them; the ban, the lift and the subscription's write keep them. A database of its own,
// migrated as the release before left it, then to this release.
import { describe, expect, it } from "vitest";
import { migratePostgres } from "../src/db/migrate.js";
import { databaseBefore } from "./support/migration-database.js";

const migrated = databaseBefore("sanctioned", "20261128104717_reader_sanctioned_until");
const direct = migrated.url;
const db = () => migrated.db();

describe("readers.sanctioned_until and discussions.followed", () => {
  it("are filled by their migrations; a ban keeps the reader's (the lift: test/safety-bans.test.ts; a follow: test/following.test.ts)", async () => {
    await db().query(`INSERT INTO tenants (id, name, identity_secret_enc) VALUES ('ten_s', 'S', 'x')`);
    for (const r of ["ann", "bob", "cy", "dee", "eve"]) {
      await db().query(`INSERT INTO readers (tenant_id, id, name) VALUES ('ten_s', $1, $1)`, [r]);
    }
    const sanction = (id: string, reader: string, until: string | null, lifted: boolean, shadow = false) =>
      db().query(
        `INSERT INTO reader_sanctions (id, tenant_id, reader_id, until, shadow, created_by, created_at, lifted_at)
         VALUES ($1, 'ten_s', $2, $3::timestamptz, $4, 'mod', now() - interval '1 day', CASE WHEN $5 THEN now() END)`,
        [id, reader, until, shadow, lifted],
      );
    await sanction("s1", "ann", null, false); // a ban in force
    await sanction("s2", "bob", "2999-01-01T00:00:00Z", false, true); // a shadow ban until a future date
    await sanction("s3", "cy", "2001-01-01T00:00:00Z", false); // a suspension that has ended
    await sanction("s4", "dee", null, true); // a ban lifted
    // two discussions, one followed with `all`, one silenced by its reader
    for (const [d, mode] of [
      ["d-all", "all"],
      ["d-off", "off"],
    ]) {
      await db().query(`INSERT INTO discussions (tenant_id, id) VALUES ('ten_s', $1)`, [d]);
      await db().query(
        `INSERT INTO discussion_subscriptions (tenant_id, discussion_id, reader_id, mode, created_at, updated_at)
         VALUES ('ten_s', $1, 'ann', $2::"FollowMode", now(), now())`,
        [d, mode],
      );
    }
    await migratePostgres(direct);
    const followed = await migrated
      .db()
      .query<{ id: string; followed: boolean }>(`SELECT id, followed FROM discussions WHERE tenant_id = 'ten_s' ORDER BY id`);
    expect(followed.rows).toEqual([
      { id: "d-all", followed: true },
      { id: "d-off", followed: false },
    ]);
    const until = async () =>
      Object.fromEntries(
        (
          await db().query<{ id: string; until: string | null }>(
            `SELECT id, CASE WHEN sanctioned_until = 'infinity' THEN 'infinity' ELSE to_char(sanctioned_until AT TIME ZONE 'UTC', 'YYYY-MM-DD') END AS until
               FROM readers WHERE tenant_id = 'ten_s' ORDER BY id`,
          )
        ).rows.map((r) => [r.id, r.until]),
      );
    expect(await until()).toEqual({ ann: "infinity", bob: "2999-01-01", cy: null, dee: null, eve: null });

    // a suspension of eve made by the write function: her row says until when
    await db().query(`SELECT eng_ban_reader('ten_s', 'eve', 's5', '2998-02-03T00:00:00Z', NULL, false, 'mod', false, now())`);
    expect((await until()).eve).toBe("2998-02-03");
    // and a post of hers is refused while it is in force; one of a reader whose suspension ended is not
    const refused = await db()
      .query(
        `SELECT eng_post_comment('ten_s', 'd1', 'c1', 'eve', 'eve', NULL, NULL, 'hi', '<p>hi</p>', NULL, 'approved', NULL,
                                 'approved', NULL, 0, now(), NULL, NULL, NULL, NULL, NULL)`,
      )
      .then(
        () => null,
        (err: Error) => err.message,
      );
    expect(refused).toMatch(/reader_banned|banned|suspended/i);
    await db().query(
      `SELECT eng_post_comment('ten_s', 'd1', 'c2', 'cy', 'cy', NULL, NULL, 'hi', '<p>hi</p>', NULL, 'approved', NULL,
                               'approved', NULL, 0, now(), NULL, NULL, NULL, NULL, NULL)`,
    );
  });
});
