// Console operators' passkeys over HTTP (contract section 29; src/modules/console/engine/passkey-routes.ts):
// the routes that add, list and remove one need the console session (401 without, 403 csrf_failed for
// another site's page); the registration options name the relying party of PUBLIC_URL, ask for a
// discoverable credential and prefer user verification, for a user handle of 32 random bytes that is
// neither the operator's id nor their email, the operator's passkeys excluded; the sign-in options'
// challenge is signed by the service, and an assertion is refused (401 passkey_refused) for a challenge
// the service did not sign or that expired, and for a credential no operator has; a body that is no
// credential is 422; removing another operator's passkey is 404; refused assertions are counted per
// client address as failed password sign-ins are (429 once spent). The ceremonies with an authenticator
// are test/browser/console-passkeys.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { createOperator, signConsoleLink } from "../src/modules/console/engine/operators.js";
import { newId } from "../src/lib/ids.js";
import { ownAddress, postFrom } from "./support/from-address.js";

const PUBLIC_URL = "https://comments.example.test";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let clock: ReturnType<typeof manualClock>;

beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startServer({ PUBLIC_URL }, { clock });
  [t, other] = await Promise.all([createTestTenant(server), createTestTenant(server)]);
});
afterAll(() => server?.stop());

interface Operator {
  id: string;
  email: string;
  cookie: string;
  csrf: string;
}

/** An operator of `tenant`, signed in by their console link: the session cookie and CSRF token. */
async function signedIn(tenant: TestTenant, email: string): Promise<Operator> {
  const { operator } = await createOperator(server.app.runtime.services, { tenantId: tenant.tenantId, email, role: "moderator" });
  const link = signConsoleLink({
    secret: server.app.runtime.services.adminJwtSecret,
    tenantId: tenant.tenantId,
    email,
    now: clock.now(),
    baseUrl: server.url,
  });
  const opened = await fetch(link.url, { redirect: "manual" });
  const cookie = (opened.headers.get("set-cookie") ?? "").split(";")[0]!;
  const session = (await (await fetch(`${server.url}/console/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  return { id: operator.id, email, cookie, csrf: session.csrfToken };
}

/** A request to the service; `as` sends the operator's cookie and CSRF token. */
async function call(method: string, path: string, opts: { as?: Operator; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.as) Object.assign(headers, { cookie: opts.as.cookie, "x-csrf-token": opts.as.csrf }, opts.headers);
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : null };
}

/** this file's sign-ins come from here, apart from other files' (their refusals are counted per address) */
const FROM = ownAddress();

/** POST /console/auth/passkeys/authenticate over real HTTP from `from`. */
const authenticate = (body: unknown, from = FROM) => postFrom(server.url, "/console/auth/passkeys/authenticate", from, body);

/** A passkey row of `op`, written as a registration writes one (the browser test makes real ones). */
async function storedPasskey(tenant: TestTenant, op: { id: string }, label: string): Promise<string> {
  const id = newId("pk");
  await server.app.runtime.services.sql.query(
    `INSERT INTO operator_passkeys (id, tenant_id, operator_id, credential_id, public_key, counter, transports, user_handle, device_type, backed_up, label, created_at)
     VALUES ($1, $2, $3, $4, $5, 0, '{internal}', $6, 'singleDevice', false, $7, $8)`,
    [id, tenant.tenantId, op.id, `cred-${id}`, Buffer.from("not a key"), Buffer.alloc(32, 7).toString("base64url"), label, clock.now()],
  );
  return id;
}

/** An assertion's JSON as @simplewebauthn/browser makes it, signing `challenge` (its signature no signature). */
const assertion = (challenge: string, id = "AAAAAAAAAAAAAAAAAAAAAA") => ({
  id,
  rawId: id,
  type: "public-key",
  response: {
    clientDataJSON: Buffer.from(JSON.stringify({ type: "webauthn.get", challenge, origin: PUBLIC_URL })).toString("base64url"),
    authenticatorData: Buffer.alloc(37).toString("base64url"),
    signature: Buffer.alloc(64).toString("base64url"),
  },
  clientExtensionResults: {},
});

describe("adding a passkey needs the operator's console session", () => {
  it("answers 401 without one (an API key is no operator) and 403 to another site's page", async () => {
    for (const [method, path] of [
      ["POST", "/console/auth/passkeys/options"],
      ["POST", "/console/auth/passkeys"],
      ["GET", "/console/auth/passkeys"],
      ["DELETE", "/console/auth/passkeys/pk_x"],
    ] as const) {
      const bare = await call(method, path, method === "POST" ? { body: {} } : {});
      expect(bare.status, `${method} ${path}`).toBe(401);
      expect(bare.body.code).toBe("unauthenticated");
      const key = await call(method, path, { headers: { "x-api-key": t.apiKey }, ...(method === "POST" ? { body: {} } : {}) });
      expect(key.status, `${method} ${path} with an API key`).toBe(401);
    }
    const ann = await signedIn(t, "ann@example.com");
    // the cookie without the CSRF token, from another site's page
    const forged = await call("POST", "/console/auth/passkeys/options", {
      headers: { cookie: ann.cookie, origin: "https://evil.example" },
      body: {},
    });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe("csrf_failed");
    const wrongToken = await call("POST", "/console/auth/passkeys/options", {
      as: ann,
      headers: { "x-csrf-token": "nope", origin: "https://evil.example" },
      body: {},
    });
    expect(wrongToken.status).toBe(403);
    const del = await call("DELETE", "/console/auth/passkeys/pk_x", { headers: { cookie: ann.cookie, origin: "https://evil.example" } });
    expect(del.status).toBe(403);
  });
});

describe("registration options", () => {
  it("name PUBLIC_URL's host, ask for a discoverable credential, prefer user verification, and hide who the operator is", async () => {
    const bo = await signedIn(t, "bo.operator@example.com");
    const r = await call("POST", "/console/auth/passkeys/options", { as: bo, body: {} });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const o = r.body;
    expect(o.rp).toEqual({ id: "comments.example.test", name: "Engagement console" });
    expect(o.authenticatorSelection).toMatchObject({ residentKey: "required", requireResidentKey: true, userVerification: "preferred" });
    expect(o.attestation).toBe("none");
    expect(o.excludeCredentials).toEqual([]);
    expect(Buffer.from(o.challenge, "base64url")).toHaveLength(32);
    // the user handle: 32 random bytes, nothing of the operator's id or email
    const handle = Buffer.from(o.user.id, "base64url");
    expect(handle).toHaveLength(32);
    for (const secret of [bo.id, bo.email, "bo.operator"]) expect(handle.toString("latin1")).not.toContain(secret);
    expect(o.user.name).toContain(bo.email);

    // with a passkey: it is excluded, and the handle is the one it was made for
    const held = await storedPasskey(t, bo, "Laptop");
    const again = (await call("POST", "/console/auth/passkeys/options", { as: bo, body: {} })).body;
    expect(again.excludeCredentials).toEqual([{ id: `cred-${held}`, type: "public-key", transports: ["internal"] }]);
    expect(again.user.id).toBe(Buffer.alloc(32, 7).toString("base64url"));
    expect(again.challenge).not.toBe(o.challenge);
  });

  it("a registration whose body is no credential is 422; one signing an unknown challenge is 400 passkey_invalid", async () => {
    const cy = await signedIn(t, "cy@example.com");
    for (const body of [{}, { credential: "text" }, { credential: [] }, { credential: { id: "x" } }]) {
      const r = await call("POST", "/console/auth/passkeys", { as: cy, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    const unknown = await call("POST", "/console/auth/passkeys", {
      as: cy,
      body: { credential: { ...assertion(Buffer.alloc(32, 1).toString("base64url")), response: { clientDataJSON: "e30" } } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("passkey_invalid");
    const label = await call("POST", "/console/auth/passkeys", { as: cy, body: { credential: assertion("x"), label: "a\nb" } });
    expect(label.status).toBe(422);
  });
});

describe("an operator's passkeys", () => {
  it("lists their own only; removes one of theirs, 404 for another operator's (of the tenant or another)", async () => {
    const di = await signedIn(t, "di@example.com");
    const ed = await signedIn(t, "ed@example.com");
    const far = await signedIn(other, "di@example.com");
    const first = await storedPasskey(t, di, "Phone");
    clock.advance(1000);
    const second = await storedPasskey(t, di, "Laptop");
    const eds = await storedPasskey(t, ed, "Ed's key");
    const fars = await storedPasskey(other, far, "Other tenant");

    const list = await call("GET", "/console/auth/passkeys", { as: di });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      items: [
        { id: second, label: "Laptop", createdAt: expect.any(String), lastUsedAt: null },
        { id: first, label: "Phone", createdAt: expect.any(String), lastUsedAt: null },
      ],
      nextCursor: null,
    });
    expect((await call("GET", "/console/auth/passkeys", { as: far })).body.items.map((p: { id: string }) => p.id)).toEqual([fars]);

    for (const id of [eds, fars, "pk_nothing"]) {
      const r = await call("DELETE", `/console/auth/passkeys/${id}`, { as: di });
      expect(r.status, id).toBe(404);
      expect(r.body.code).toBe("not_found");
    }
    expect((await call("GET", "/console/auth/passkeys", { as: ed })).body.items).toHaveLength(1);
    const gone = await call("DELETE", `/console/auth/passkeys/${first}`, { as: di });
    expect(gone.status).toBe(204);
    expect((await call("GET", "/console/auth/passkeys", { as: di })).body.items.map((p: { id: string }) => p.id)).toEqual([second]);
    expect((await call("DELETE", `/console/auth/passkeys/${first}`, { as: di })).status).toBe(404);
  });
});

describe("signing in with a passkey", () => {
  const options = () => call("POST", "/console/auth/passkeys/authentication-options", { body: {} });

  it("offers a signed challenge for any discoverable credential, with no session", async () => {
    const r = await options();
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toMatchObject({ rpId: "comments.example.test", userVerification: "preferred", timeout: 300_000 });
    expect(r.body.allowCredentials ?? []).toEqual([]);
    // the expiry, random bytes and their MAC
    expect(Buffer.from(r.body.challenge, "base64url")).toHaveLength(57);
    expect((await options()).body.challenge).not.toBe(r.body.challenge);
  });

  it("refuses (401 passkey_refused) a challenge the service did not sign, one expired, and a credential no operator has", async () => {
    const refused = async (credential: unknown, why: string) => {
      const r = await authenticate({ credential });
      expect(r.status, why).toBe(401);
      expect(r.body.code, why).toBe("passkey_refused");
      expect(r.headers["set-cookie"], why).toBeUndefined();
      return r.body.detail as string;
    };
    expect(await refused(assertion(Buffer.alloc(32, 9).toString("base64url")), "random challenge")).toContain("challenge is unknown");
    const genuine = (await options()).body.challenge as string;
    // one bit of the expiry changed: its MAC no longer matches
    const bytes = Buffer.from(genuine, "base64url");
    bytes[5] = bytes[5]! ^ 1;
    expect(await refused(assertion(bytes.toString("base64url")), "tampered challenge")).toContain("challenge is unknown");
    expect(await refused(assertion(genuine), "unknown credential")).toContain("no operator's passkey has this credential");
    // a passkey of an operator, with a signature that is none
    const fay = await signedIn(t, "fay@example.com");
    const held = await storedPasskey(t, fay, "Fay's key");
    // found, and refused by the assertion's checks (not for its challenge, nor as unknown)
    const bad = await refused(assertion(genuine, `cred-${held}`), "bad signature");
    expect(bad).not.toMatch(/challenge is unknown|no operator's passkey/);
    // five minutes later the challenge is no good
    const old = (await options()).body.challenge as string;
    clock.advance(5 * 60_000 + 1000);
    expect(await refused(assertion(old), "expired challenge")).toContain("challenge is unknown");
  });

  it("answers 422 to a body that is no credential", async () => {
    for (const body of [{}, { credential: null }, { credential: "abc" }, { credential: { id: "!!", type: "public-key" } }]) {
      const r = await authenticate(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
  });

  it("counts refusals per client address, as failed password sign-ins: 429 with Retry-After once spent", async () => {
    const from = ownAddress();
    const challenge = (await options()).body.challenge as string;
    const statuses: number[] = [];
    let retryAfter: unknown;
    for (let i = 0; i < 21; i++) {
      // another credential each time: the address is what runs out
      const answer = await authenticate({ credential: assertion(challenge, `unknownCredential${i}`) }, from);
      statuses.push(answer.status);
      retryAfter = answer.headers["retry-after"];
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
