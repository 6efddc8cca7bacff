// The tenant guard (src/db/tenant-guard.ts) with PostgreSQL's own parser: statements that keep to
// one tenant pass; each way of reaching another tenant's rows is refused.
import { beforeAll, describe, expect, it } from "vitest";
import { checkTenantBound, loadTenantGuard } from "../../src/db/tenant-guard.js";

beforeAll(() => loadTenantGuard());
const ONE = new Set([1]);
const ok = (text: string, bound = ONE) => expect(() => checkTenantBound(text, bound)).not.toThrow();
const refused = (text: string, reason: RegExp, bound = ONE) => expect(() => checkTenantBound(text, bound)).toThrow(reason);

describe("tenant guard: statements that keep to the tenant", () => {
  it("passes tables tied to $1 directly, through joins, correlated subqueries and CTEs", () => {
    ok("SELECT id FROM comments WHERE tenant_id = $1 AND id = $2");
    ok("SELECT c.id FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.reader_id WHERE c.tenant_id = $1");
    ok("SELECT c.id FROM comments c LEFT JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.reader_id WHERE c.tenant_id = $1::text");
    ok(
      "SELECT c.id, (SELECT count(*) FROM reactions x WHERE x.tenant_id = c.tenant_id AND x.comment_id = c.id) FROM comments c WHERE $1 = c.tenant_id",
    );
    ok("SELECT * FROM comments c WHERE c.tenant_id = $1 AND EXISTS (SELECT 1 FROM readers r WHERE r.tenant_id = c.tenant_id)");
    ok("WITH w AS (SELECT id FROM discussions WHERE tenant_id = $1) SELECT * FROM w");
    ok("SELECT r.* FROM readers r, LATERAL (SELECT 1 FROM comments c WHERE c.tenant_id = r.tenant_id LIMIT 1) x WHERE r.tenant_id = $1");
    ok("SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE");
    ok("SELECT s.* FROM webhook_secrets s JOIN webhook_endpoints e ON e.id = s.endpoint_id WHERE e.tenant_id = $1");
    ok("UPDATE readers SET name = $2 WHERE tenant_id = $1 AND id = $3");
    ok(
      "UPDATE comments c SET body = $3 FROM discussions d WHERE c.tenant_id = $1 AND d.tenant_id = c.tenant_id AND d.id = c.discussion_id",
    );
    ok("DELETE FROM email_items WHERE tenant_id = $1 AND reader_id = $2 RETURNING id");
    ok(
      "INSERT INTO readers (tenant_id, id, name) VALUES ($1, $2, $3), ($1, $4, $5) ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name",
    );
    ok(
      "INSERT INTO webhook_deliveries (tenant_id, id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET id = excluded.id WHERE webhook_deliveries.tenant_id = excluded.tenant_id",
    );
    ok("INSERT INTO audit_log (tenant_id, id) SELECT c.tenant_id, c.id FROM comments c WHERE c.tenant_id = $1");
    ok("SELECT eng_visible_comment($1, $2, false, null)");
    ok("SELECT eng_comment_json(c), eng_iso(c.created_at), eng_iso($2) FROM comments c WHERE c.tenant_id = $1");
    ok("SELECT id FROM comments WHERE tenant_id = $3 UNION ALL SELECT id FROM readers WHERE tenant_id = $3", new Set([3]));
  });
});

describe("tenant guard: each way of reaching another tenant's rows is refused", () => {
  it("a table not tied at all, or tied to another parameter", () => {
    refused("SELECT * FROM comments WHERE id = $2", /comments is not tied/);
    refused("SELECT * FROM comments WHERE tenant_id = $2", /comments is not tied/);
    refused("SELECT * FROM comments WHERE tenant_id = 'ten_other'", /comments is not tied/);
  });
  it("a condition that does not have to hold (OR, NOT, an outer join's preserved side)", () => {
    refused("SELECT * FROM comments WHERE tenant_id = $1 OR id = $2", /comments is not tied/);
    refused("SELECT * FROM comments WHERE NOT (tenant_id <> $1 AND id = $2) AND id = $2", /comments is not tied/);
    refused("SELECT c.* FROM comments c LEFT JOIN readers r ON c.tenant_id = $1", /comments \(c\) is not tied/);
    refused("SELECT c.* FROM comments c FULL JOIN readers r ON r.tenant_id = $1 AND c.tenant_id = $1", /is not tied/);
  });
  it("a second table in a join, a subquery, a CTE or a UNION arm", () => {
    refused("SELECT * FROM comments c JOIN readers r ON r.id = c.reader_id WHERE c.tenant_id = $1", /readers \(r\) is not tied/);
    refused("SELECT c.id, (SELECT body FROM comments x WHERE x.id = $2) FROM comments c WHERE c.tenant_id = $1", /comments \(x\)/);
    refused("WITH w AS (SELECT id FROM discussions) SELECT * FROM w", /discussions is not tied/);
    refused("SELECT id FROM comments WHERE tenant_id = $1 UNION SELECT id FROM readers", /readers is not tied/);
    refused("SELECT * FROM comments c WHERE c.tenant_id = $1 AND EXISTS (SELECT 1 FROM comments c WHERE c.id = $2)", /comments \(c\)/);
  });
  it("writes that reach out: updates, deletes, inserts, upserts, our functions", () => {
    refused("UPDATE readers SET name = $2 WHERE id = $3", /readers is not tied/);
    refused("UPDATE readers SET tenant_id = $2 WHERE tenant_id = $1", /move a row/);
    refused("DELETE FROM comments WHERE id = $2", /comments is not tied/);
    refused("INSERT INTO readers (tenant_id, id) VALUES ($2, $3)", /takes tenant_id from/);
    refused("INSERT INTO readers (id, name) VALUES ($2, $3)", /names tenant_id/);
    refused("INSERT INTO readers (tenant_id, id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = 'x'", /ON CONFLICT/);
    refused("INSERT INTO tenants (id) VALUES ($1)", /not inserted/);
    refused("SELECT eng_visible_comment($2, $3, false, null)", /takes the tenant's id first/);
    refused("SELECT eng_discussion('ten_other', $2)", /takes the tenant's id first/);
    refused("SELECT * FROM webhook_secrets WHERE endpoint_id = $2", /webhook_secrets is not tied/);
  });
  it("what is not one query of tenant data", () => {
    refused("SELECT 1 FROM comments WHERE tenant_id = $1; DELETE FROM comments", /one statement/);
    refused("TRUNCATE comments", /Truncate statements/);
    refused("SELECT * FROM pg_shadow WHERE tenant_id = $1", /pg_shadow is not tied/);
    refused("SELEKT 1", /does not parse/);
  });
});
