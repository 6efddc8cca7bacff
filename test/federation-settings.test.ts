// Settings `federation` (contract section 24): its defaults, a PATCH merged field by field over REST
// and GraphQL, every problem listed, blocked domains normalised by the URL parser, and the handle
// unique on the server (409 handle_taken, held by the database's unique column across tenants).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { TestFederationSettingsDocument, TestUpdateFederationSettingsDocument } from "./generated/operations.js";

let server: TestServer;
/** the settings added to the first four, at their defaults */
const PROFILE = { url: null, icon: null, summary: null, domain: null };

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** a handle no other test's tenant holds */
const uniqueHandle = (prefix: string) => `${prefix}_${Math.random().toString(36).slice(2, 10)}`;

describe("settings federation", () => {
  it("answers the defaults, and a PATCH merges field by field", async () => {
    const t = await createTestTenant(server);
    const got = await t.api.get("/api/v1/settings");
    expect(got.body.federation).toEqual({ enabled: false, handle: null, remoteModeration: "pre", blockedDomains: [], ...PROFILE });
    const handle = uniqueHandle("site");
    const a = await t.api.patch("/api/v1/settings", { federation: { handle, enabled: true } });
    expect(a.status).toBe(200);
    expect(a.body.federation).toEqual({ enabled: true, handle, remoteModeration: "pre", blockedDomains: [], ...PROFILE });
    const b = await t.api.patch("/api/v1/settings", { federation: { remoteModeration: "post" } });
    expect(b.body.federation).toEqual({ enabled: true, handle, remoteModeration: "post", blockedDomains: [], ...PROFILE });
    expect((await t.api.get("/api/v1/settings")).body.federation).toEqual(b.body.federation);
    // the column the database keeps unique holds the same handle
    const row = await server.app.runtime.services.prisma.tenant.findUnique({
      where: { id: t.tenantId },
      select: { federationHandle: true },
    });
    expect(row?.federationHandle).toBe(handle);
  });

  it("is read and patched over GraphQL", async () => {
    const t = await createTestTenant(server);
    const read = await t.api.gql(TestFederationSettingsDocument);
    expect(read.data?.settings.federation).toEqual({
      enabled: false,
      handle: null,
      remoteModeration: "pre",
      blockedDomains: [],
      ...PROFILE,
    });
    const handle = uniqueHandle("gq");
    const u = await t.api.gql(TestUpdateFederationSettingsDocument, {
      input: { federation: { handle, blockedDomains: ["Spam.Example", "bücher.example."] } },
    });
    expect(u.errors).toBeUndefined();
    expect(u.data?.updateSettings.federation).toEqual({
      enabled: false,
      handle,
      remoteModeration: "pre",
      blockedDomains: ["spam.example", "xn--bcher-kva.example"],
      ...PROFILE,
    });
    const bad = await t.api.gql(TestUpdateFederationSettingsDocument, { input: { federation: { handle: "Not OK" } } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "validation_failed", status: 422 });
    expect(bad.errors?.[0]?.extensions?.errors).toEqual([{ path: "federation.handle", message: expect.stringContaining("a-z") }]);
  });

  it("refuses bad values, listing every problem, and stores nothing", async () => {
    const t = await createTestTenant(server);
    // the input's shape first (an unknown member, a wrong type)
    const shape = await t.api.patch("/api/v1/settings", { federation: { enabled: "yes", colour: "blue" } });
    expect(shape.status).toBe(422);
    expect(shape.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["federation.colour", "federation.enabled"]);
    // then the values, every problem at once
    const r = await t.api.patch("/api/v1/settings", {
      federation: {
        handle: "x".repeat(31),
        remoteModeration: "sometimes",
        blockedDomains: ["ok.example", "https://mastodon.social", "a.example/path", "host:8080", "two words.example", "", "user@x.example"],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("validation_failed");
    expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "federation.blockedDomains[1]",
      "federation.blockedDomains[2]",
      "federation.blockedDomains[3]",
      "federation.blockedDomains[4]",
      "federation.blockedDomains[5]",
      "federation.blockedDomains[6]",
      "federation.handle",
      "federation.remoteModeration",
    ]);
    expect((await t.api.get("/api/v1/settings")).body.federation.blockedDomains).toEqual([]);
    for (const handle of ["UPPER", "with-dash", "", "émile"]) {
      const h = await t.api.patch("/api/v1/settings", { federation: { handle } });
      expect([h.status, h.body.errors?.[0]?.path], handle).toEqual([422, "federation.handle"]);
    }
    // a domain named twice, once normalised
    const twice = await t.api.patch("/api/v1/settings", { federation: { blockedDomains: ["a.example", "A.EXAMPLE"] } });
    expect([twice.status, twice.body.errors?.[0]?.path]).toEqual([422, "federation.blockedDomains"]);
    const many = await t.api.patch("/api/v1/settings", {
      federation: { blockedDomains: Array.from({ length: 1001 }, (_, i) => `d${i}.example`) },
    });
    expect([many.status, many.body.errors?.[0]?.path]).toEqual([422, "federation.blockedDomains"]);
    // on without a handle
    const on = await t.api.patch("/api/v1/settings", { federation: { enabled: true } });
    expect(on.status).toBe(422);
    expect(on.body.errors).toEqual([{ path: "federation.handle", message: "must be set to turn federation on" }]);
  });

  it("keeps a handle unique across tenants: 409 handle_taken, nothing saved; freed once its holder lets it go", async () => {
    const a = await createTestTenant(server);
    const b = await createTestTenant(server);
    const handle = uniqueHandle("taken");
    expect((await a.api.patch("/api/v1/settings", { federation: { handle } })).status).toBe(200);
    const refused = await b.api.patch("/api/v1/settings", { federation: { handle, remoteModeration: "post" } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      type: "https://engagement.dev/problems/handle-taken",
      status: 409,
      code: "handle_taken",
      handle,
    });
    expect((await b.api.get("/api/v1/settings")).body.federation).toEqual({
      enabled: false,
      handle: null,
      remoteModeration: "pre",
      blockedDomains: [],
      ...PROFILE,
    });
    const gql = await b.api.gql(TestUpdateFederationSettingsDocument, { input: { federation: { handle } } });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "handle_taken", status: 409 });
    // its own handle again is no conflict
    expect((await a.api.patch("/api/v1/settings", { federation: { handle } })).status).toBe(200);
    // two tenants asking for one free handle at once: one gets it
    const fresh = uniqueHandle("race");
    const both = await Promise.all([a, b].map((t) => t.api.patch("/api/v1/settings", { federation: { handle: fresh } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    // released, it can be taken
    const holder = both[0]!.status === 200 ? a : b;
    const other = holder === a ? b : a;
    expect((await holder.api.patch("/api/v1/settings", { federation: { handle: null } })).body.federation.handle).toBeNull();
    expect((await other.api.patch("/api/v1/settings", { federation: { handle: fresh } })).status).toBe(200);
  });

  it("takes the actor's url, icon, summary and domain, each parsed (a URL as the parser prints it, a domain in punycode), and refuses bad ones", async () => {
    const t = await createTestTenant(server);
    const ok = await t.api.patch("/api/v1/settings", {
      federation: {
        url: "https://Blog.Example/home",
        icon: "https://cdn.blog.example/a%20b/avatar.PNG?v=2",
        summary: "  Notes from the blog.  ",
        domain: "Bücher.Example.",
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.federation).toMatchObject({
      url: "https://blog.example/home",
      icon: "https://cdn.blog.example/a%20b/avatar.PNG?v=2",
      summary: "Notes from the blog.",
      domain: "xn--bcher-kva.example",
    });
    const gql = await t.api.gql(TestFederationSettingsDocument);
    expect(gql.data?.settings.federation).toMatchObject({ url: "https://blog.example/home", domain: "xn--bcher-kva.example" });
    const bad = await t.api.patch("/api/v1/settings", {
      federation: {
        url: "javascript:alert(1)",
        icon: "http://cdn.blog.example/avatar.png",
        summary: "x".repeat(501),
        domain: "https://blog.example",
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "federation.domain",
      "federation.icon",
      "federation.summary",
      "federation.url",
    ]);
    for (const icon of [
      "https://user:pw@cdn.example/a.png",
      "https://cdn.example/a.png#x",
      "data:image/png;base64,AAAA",
      "not a url",
      `https://cdn.example/${"a".repeat(2048)}.png`,
      7,
    ]) {
      const r = await t.api.patch("/api/v1/settings", { federation: { icon } });
      expect([r.status, r.body.errors?.[0]?.path], String(icon).slice(0, 40)).toEqual([422, "federation.icon"]);
    }
    for (const domain of [
      "blog.example:8080",
      "blog.example/path",
      "a b.example",
      "localhost",
      "",
      "user@blog.example",
      ["blog.example"],
    ]) {
      const r = await t.api.patch("/api/v1/settings", { federation: { domain } });
      expect([r.status, r.body.errors?.[0]?.path], String(domain)).toEqual([422, "federation.domain"]);
    }
    // what was stored is unchanged by the refusals; null sets each back to its default
    expect((await t.api.get("/api/v1/settings")).body.federation.domain).toBe("xn--bcher-kva.example");
    const back = await t.api.patch("/api/v1/settings", { federation: { url: null, icon: null, summary: null, domain: null } });
    expect(back.body.federation).toMatchObject(PROFILE);
  });
});
