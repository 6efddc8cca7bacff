// The settings' "Test token" (src/modules/identity/test-token.ts): POST /api/v1/settings/identity/test-token
// and GraphQL testIdentityToken verify a pasted token as a request's X-Service-Identity would be — a
// real OpenID provider's token (test/support/oidc-provider.ts) by the tenant's providers, an HS256
// assertion by the tenant's secrets — and answer the reader or the invalid_identity reason, with the
// decoded header and claims.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestIdp, type TestIdp } from "./support/oidc-provider.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { TestIdentityTokenDocument } from "./generated/operations.js";

let idp: TestIdp;
let server: TestServer;
let t: TestTenant;
const PATH = "/api/v1/settings/identity/test-token";

beforeAll(async () => {
  [idp, server] = await Promise.all([startTestIdp(), startServer({}, { identityProviders: { cooldownMs: 0 } })]);
  t = await createTestTenant(server);
  const set = await t.api.patch("/api/v1/settings", { identity: { providers: [{ issuer: idp.issuer, audience: "engagement-test" }] } });
  expect(set.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await idp?.close();
});

describe("Test token (settings)", () => {
  it("a valid provider token: ok, the reader it stands for, the decoded header and claims", async () => {
    const token = await idp.token({
      sub: "u-42",
      name: "Ada",
      picture: "https://img.example/ada.png",
      email: "ada@example.com",
      email_verified: true,
    });
    const r = await t.api.post(PATH, { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      reader: {
        id: `${idp.issuer}#u-42`,
        name: "Ada",
        avatarUrl: "https://img.example/ada.png",
        email: "ada@example.com",
        emailVerified: true,
      },
      claims: expect.objectContaining({ sub: "u-42", iss: idp.issuer, aud: "engagement-test", email: "ada@example.com" }),
      header: { alg: "RS256", kid: expect.stringMatching(/^key-1-/) },
    });
    expect(typeof r.body.claims.exp).toBe("number");
    // the same through GraphQL
    const g = await t.api.gql(TestIdentityTokenDocument, { token });
    expect(g.errors).toBeUndefined();
    expect(g.data!.testIdentityToken).toMatchObject({ ok: true, error: null, reader: { id: `${idp.issuer}#u-42` } });
  });

  it("refusals are 200 ok:false with the reason a request would get: expired, wrong audience", async () => {
    const expired = await idp.token({ sub: "u" }, { expiresIn: "-5m" });
    const r = await t.api.post(PATH, { token: expired });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: false,
      error: expect.stringMatching(/expired/),
      claims: expect.objectContaining({ sub: "u", iss: idp.issuer }),
      header: { alg: "RS256", kid: expect.any(String) },
    });
    // exactly what posting with it answers
    expect((await t.api.put("/api/v1/discussions/tt-1", {})).status).toBe(201);
    const posted = await t.api.post("/api/v1/discussions/tt-1/comments", { body: "x" }, { identity: expired });
    expect(posted.status).toBe(401);
    expect(posted.body.detail).toBe(r.body.error);

    const wrongAud = await t.api.post(PATH, { token: await idp.token({ sub: "u" }, { audience: "another-app" }) });
    expect(wrongAud.body).toMatchObject({ ok: false, error: expect.stringMatching(/'aud'/), claims: { aud: "another-app" } });
  });

  it("the tenant's HS256 assertion: its reader, without email; another secret's is refused", async () => {
    const token = await t.identity("rita", { name: "Rita", avatarUrl: "https://img.example/r.png" });
    const r = await t.api.post(PATH, { token });
    expect(r.body).toEqual({
      ok: true,
      reader: { id: "rita", name: "Rita", avatarUrl: "https://img.example/r.png", email: null, emailVerified: false },
      claims: expect.objectContaining({ sub: "rita", name: "Rita" }),
      header: { alg: "HS256", kid: null },
    });
    const other = await createTestTenant(server);
    const foreign = await t.api.post(PATH, { token: await other.identity("rita") });
    expect(foreign.body).toMatchObject({ ok: false, error: expect.stringMatching(/signature/), header: { alg: "HS256" } });
  });

  it("garbage: ok:false, nothing decoded; an empty or missing token is 422; only manage_settings may test", async () => {
    const r = await t.api.post(PATH, { token: "not a token" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: false, error: expect.stringMatching(/format/), claims: null, header: null });
    expect((await t.api.post(PATH, { token: "" })).status).toBe(422);
    expect((await t.api.post(PATH, {})).status).toBe(422);
    const extra = await t.api.post(PATH, { token: "x", reader: "y" });
    expect(extra.status).toBe(422);
    const moderator = await keyWith(t, ["moderate_content"]);
    const refused = await t.as({ key: moderator.key }).post(PATH, { token: "x" });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("missing_capability");
  });
});
