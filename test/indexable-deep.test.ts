// A chain of replies hundreds deep costs the fragment a bounded number of statements: the page's
// list, then one per level of replies down to REPLY_LEVELS (src/modules/indexable/snapshot.ts), not
// one per level of the chain; the comment at the last level links its replies page, which goes on
// from there, so the whole chain is still reachable through plain links.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { createTenantStores } from "../src/db/tenant-store.js";
import { REPLY_LEVELS } from "../src/modules/indexable/snapshot.js";

let server: TestServer;
let t: TestTenant;
let pk = "";
beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
});
afterAll(() => server?.stop());

/** a discussion holding one top-level comment and a chain of `depth` replies under it, each the only reply of the one before */
async function chain(discussionId: string, depth: number): Promise<string[]> {
  const prisma = server.app.runtime.services.prisma;
  await prisma.discussion.create({ data: { tenantId: t.tenantId, id: discussionId, commentCount: depth + 1 } });
  await prisma.reader.upsert({
    where: { tenantId_id: { tenantId: t.tenantId, id: "deep" } },
    create: { tenantId: t.tenantId, id: "deep", name: "Deep Diver" },
    update: {},
  });
  const base = Date.now() - 1_000_000;
  const ids = Array.from({ length: depth + 1 }, (_, i) => `cmt_${discussionId}_${String(i).padStart(3, "0")}`);
  await prisma.comment.createMany({
    data: ids.map((id, i) => ({
      id,
      tenantId: t.tenantId,
      discussionId,
      parentId: i === 0 ? null : ids[i - 1]!,
      depth: i,
      authorId: "deep",
      body: `level ${i}`,
      status: "approved" as const,
      createdAt: new Date(base + i),
      publishedAt: new Date(base + i),
      replyCount: i === depth ? 0 : 1,
    })),
  });
  return ids;
}

/** the statements the fragment at `path` costs (every plain statement of the tenant's store and the raw client) */
async function statementsOf(path: string): Promise<{ count: number; html: string }> {
  const services = server.app.runtime.services;
  const originalSql = services.sql;
  const originalStores = services.stores;
  let count = 0;
  services.sql = {
    query: (text, values, name) => {
      count++;
      return originalSql.query(text, values, name);
    },
    long: (text, values, timeoutMs) => {
      count++;
      return originalSql.long(text, values, timeoutMs);
    },
  };
  services.stores = createTenantStores(services.scoped, services.sql);
  try {
    const res = await fetch(`${server.url}${path}`);
    expect([path, res.status]).toEqual([path, 200]);
    return { count, html: await res.text() };
  } finally {
    services.sql = originalSql;
    services.stores = originalStores;
  }
}

const articleIds = (html: string) => [...html.matchAll(/<article id="comment-([^"]+)"/g)].map((m) => m[1]!);

describe("a deep chain of replies", () => {
  it(
    "costs the fragment as many statements at 260 levels as at 30, and every level is reachable by links",
    { timeout: 60_000 },
    async () => {
      const deep = await chain("deep-260", 260);
      const shallow = await chain("deep-30", 30);
      // warm: the key, the tenant and its settings are cached after a first request
      await statementsOf(`/embed/v1/discussions/deep-30.html?key=${pk}`);
      const a = await statementsOf(`/embed/v1/discussions/deep-30.html?key=${pk}`);
      const b = await statementsOf(`/embed/v1/discussions/deep-260.html?key=${pk}`);
      expect(a.count).toBeGreaterThan(0);
      // one for the page, at most one per level read below it (and whatever a request costs beside the thread)
      expect(b.count).toBe(a.count);
      expect(b.count).toBeLessThanOrEqual(REPLY_LEVELS + 4);
      // the first page shows the top-level comment and REPLY_LEVELS levels of replies under it
      expect(articleIds(b.html)).toEqual(deep.slice(0, REPLY_LEVELS + 1));
      expect(articleIds(a.html)).toEqual(shallow.slice(0, REPLY_LEVELS + 1));

      // the last level shown links its replies page; following those links reaches the end of the chain
      const seen = new Set<string>(articleIds(b.html));
      let html = b.html;
      for (let pages = 0; pages < 100; pages++) {
        const more = [...html.matchAll(/<a href="([^"]+parentId=[^"]+)">/g)].map((m) => m[1]!.replace(/&#38;|&amp;/g, "&"));
        if (!more.length) break;
        expect(more).toHaveLength(1);
        const url = new URL(more[0]!);
        const page = await statementsOf(`${url.pathname}${url.search}`);
        expect(page.count).toBeLessThanOrEqual(REPLY_LEVELS + 5);
        for (const id of articleIds(page.html)) seen.add(id);
        html = page.html;
      }
      expect(deep.filter((id) => !seen.has(id))).toEqual([]);
    },
  );
});
