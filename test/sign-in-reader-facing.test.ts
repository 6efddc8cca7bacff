// What clients learn of the hosted sign-in (contract section 20): `readerSettings.signInUrl`, the page
// the thread element opens (null while the tenant has no method; on PUBLIC_URL, path prefix kept), and
// a reader's `signIn` on their moderator-facing profile (how they last signed in: method, provider and
// its label, when; the method their id names once all their sessions are signed out; null for a
// reader the site's own sign-in names).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { signInGuest } from "./support/sign-in.js";

const PUBLIC_URL = "https://comments.example/c/";
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL });
});
afterAll(() => server?.stop());

const READER_SETTINGS = "{ readerSettings { signInMethods signInUrl } }";
const PROFILE = "query ($id: String!) { reader(id: $id) { id signIn { method provider providerLabel at } } }";

describe("the hosted sign-in as clients see it", () => {
  it("readerSettings.signInUrl: null while no method is on, else the tenant's page on PUBLIC_URL", async () => {
    const t = await createTestTenant(server);
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    const browser = t.as({ key, headers: { origin: "https://blog.example" } });
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: ["https://blog.example"] })).status).toBe(200);
    const off = await browser.post("/graphql", { query: READER_SETTINGS });
    expect(off.body).toEqual({ data: { readerSettings: { signInMethods: [], signInUrl: null } } });
    expect((await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest", "email"] } })).status).toBe(200);
    const on = await browser.post("/graphql", { query: READER_SETTINGS });
    expect(on.body.data.readerSettings).toEqual({
      signInMethods: ["guest", "email"],
      signInUrl: `https://comments.example/c/auth/v1/${encodeURIComponent(t.tenantId)}/sign-in`,
    });
  });

  it("a reader's profile says how they signed in, even once signed out; null for the site's own readers", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest"] } })).status).toBe(200);
    const guest = await signInGuest(server.url, t.tenantId, "Gale");
    const profile = async (id: string) => {
      const r = await t.api.post("/graphql", { query: PROFILE, variables: { id } });
      expect(r.body.errors, JSON.stringify(r.body)).toBeUndefined();
      return r.body.data.reader.signIn;
    };
    const signedIn = await profile(guest.reader.id);
    expect(signedIn).toEqual({ method: "guest", provider: null, providerLabel: null, at: expect.any(String) });
    expect(Math.abs(Date.parse(signedIn.at) - Date.now())).toBeLessThan(60_000);
    expect((await t.as({ key: t.apiKey, identity: guest.token }).post("/api/v1/me/sign-out")).status).toBe(204);
    expect(await profile(guest.reader.id)).toEqual({ method: "guest", provider: null, providerLabel: null, at: null });

    const site = await t.reader("site-1", { name: "Sid" });
    expect((await site.post("/api/v1/discussions/d1/comments", { body: "hello" })).status).toBe(201);
    expect(await profile("site-1")).toBeNull();
  });
});
