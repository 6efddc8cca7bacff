// Readers' passkeys over HTTP (contract section 29; the ceremonies themselves, with an authenticator,
// are test/browser/sign-in-passkeys.test.ts): the options a reader of any identity is given (the
// relying party the host of PUBLIC_URL, a discoverable credential required, user verification
// preferred, a user handle that is not the reader's id), 401 without an identity, 403 while the
// method is off, 409 in production without PUBLIC_URL; a challenge given to one reader registers
// nothing for another; a sign-in whose challenge was never given is refused; bad bodies are 422;
// GET|DELETE /api/v1/me/passkeys.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { client } from "./support/client.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let t: TestTenant;

beforeAll(async () => {
  own = await isolatedDatabase("signinpasskeys");
  server = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0", PUBLIC_URL: "https://comments.example/" });
  t = await createTestTenant(server, "The Daily");
  const r = await t.api.patch("/api/v1/settings", { signIn: { methods: ["email", "passkey"] } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
});
afterAll(async () => {
  await server?.stop();
  await own?.drop();
});

const auth = () => client(server.url);
const path = (rest: string, tenant = t) => `/auth/v1/${tenant.tenantId}${rest}`;
const clientData = (challenge: string, type = "webauthn.create") =>
  Buffer.from(JSON.stringify({ type, challenge, origin: "https://comments.example" })).toString("base64url");

describe("readers' passkeys over HTTP", () => {
  it("gives a reader of any identity options for a discoverable credential on PUBLIC_URL's host; 401 without one", async () => {
    expect((await auth().post(path("/passkeys/options"), {})).body.code).toBe("invalid_identity");
    const identity = await t.identity("ada-1", { name: "Ada" });
    const r = await auth().post(path("/passkeys/options"), {}, { identity });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body.rp).toEqual({ id: "comments.example", name: "The Daily" });
    expect(r.body.authenticatorSelection).toMatchObject({
      residentKey: "required",
      requireResidentKey: true,
      userVerification: "preferred",
    });
    expect(r.body.attestation).toBe("none");
    expect(r.body.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.body.excludeCredentials).toEqual([]);
    // the user handle: 32 random bytes, the same for the reader's next options, never their id
    const handle = Buffer.from(r.body.user.id, "base64url");
    expect(handle).toHaveLength(32);
    expect(handle.toString("latin1")).not.toContain("ada");
    expect(r.body.user.displayName).toBe("Ada");
    const again = await auth().post(path("/passkeys/options"), {}, { identity });
    expect(again.body.challenge).not.toBe(r.body.challenge);
    const grace = await auth().post(path("/passkeys/options"), {}, { identity: await t.identity("grace-1", { name: "Grace" }) });
    expect(grace.body.user.id).not.toBe(r.body.user.id);
    const signIn = await auth().post(path("/passkeys/authentication-options"), {});
    expect(signIn.status).toBe(200);
    expect(signIn.body).toMatchObject({ rpId: "comments.example", userVerification: "preferred" });
    expect(signIn.body.allowCredentials ?? []).toEqual([]);
  });

  it("registers nothing with a challenge given to another reader, or one never given", async () => {
    const ada = await t.identity("ada-2", { name: "Ada" });
    const grace = await t.identity("grace-2", { name: "Grace" });
    const options = await auth().post(path("/passkeys/options"), {}, { identity: ada });
    const credential = (challenge: string) => ({
      id: "AAAA",
      rawId: "AAAA",
      type: "public-key",
      response: { clientDataJSON: clientData(challenge), attestationObject: "AAAA" },
      clientExtensionResults: {},
    });
    const stolen = await auth().post(path("/passkeys"), { credential: credential(options.body.challenge) }, { identity: grace });
    expect(stolen.status).toBe(400);
    expect(stolen.body.code).toBe("passkey_invalid");
    expect(stolen.body.detail).toContain("another reader");
    // that challenge is spent now: Ada cannot use it either
    const spent = await auth().post(path("/passkeys"), { credential: credential(options.body.challenge) }, { identity: ada });
    expect(spent.body.detail).toContain("unknown, used or expired");
    const never = await auth().post(path("/passkeys"), { credential: credential("bm90LWdpdmVu") }, { identity: ada });
    expect(never.body.code).toBe("passkey_invalid");
    // a fresh challenge with a credential that does not verify
    const fresh = await auth().post(path("/passkeys/options"), {}, { identity: ada });
    const bad = await auth().post(path("/passkeys"), { credential: credential(fresh.body.challenge) }, { identity: ada });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("passkey_invalid");
    const reader = client(server.url, { key: t.apiKey, identity: ada });
    expect((await reader.get("/api/v1/me/passkeys")).body).toEqual({ items: [], nextCursor: null });
  });

  it("refuses a sign-in whose challenge was never given, and bodies that are no credential", async () => {
    const refused = await auth().post(path("/passkeys/authenticate"), {
      credential: {
        id: "AAAA",
        rawId: "AAAA",
        type: "public-key",
        response: { clientDataJSON: clientData("bm90LWdpdmVu", "webauthn.get"), authenticatorData: "AAAA", signature: "AAAA" },
        clientExtensionResults: {},
      },
    });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("passkey_refused");
    for (const body of [
      {},
      { credential: "x" },
      { credential: { id: "a b", type: "public-key", response: {} } },
      { credential: { id: "AAAA", type: "x", response: {} } },
    ]) {
      const r = await auth().post(path("/passkeys/authenticate"), body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    const huge = await auth().post(path("/passkeys/authenticate"), {
      credential: { id: "AAAA", type: "public-key", response: { clientDataJSON: "A".repeat(20_000) } },
    });
    expect(huge.status).toBe(422);
  });

  it("answers 403 while the method is off, and 404 for another reader's passkey", async () => {
    const off = await createTestTenant(server);
    await off.api.patch("/api/v1/settings", { signIn: { methods: ["email"] } });
    for (const rest of ["/passkeys/options", "/passkeys", "/passkeys/authentication-options", "/passkeys/authenticate"]) {
      const r = await auth().post(path(rest, off), {}, { identity: await off.identity("x") });
      expect(r.status, rest).toBe(403);
      expect(r.body.code).toBe("sign_in_method_disabled");
    }
    const reader = client(server.url, { key: t.apiKey, identity: await t.identity("ada-3") });
    const gone = await reader.del("/api/v1/me/passkeys/pk_unknown");
    expect(gone.status).toBe(404);
    expect((await client(server.url, { key: t.apiKey }).get("/api/v1/me/passkeys")).status).toBe(401);
  });

  it("offers no passkeys in production without PUBLIC_URL (409 passkeys_unavailable)", async () => {
    const prod = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0", NODE_ENV: "production" });
    try {
      const p = await createTestTenant(prod);
      await p.api.patch("/api/v1/settings", { signIn: { methods: ["passkey"] } });
      const r = await client(prod.url).post(`/auth/v1/${p.tenantId}/passkeys/authentication-options`, {});
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("passkeys_unavailable");
    } finally {
      await prod.stop();
    }
  });
});
