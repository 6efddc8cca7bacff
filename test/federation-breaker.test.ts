// The per-domain breaker of outbound ActivityPub deliveries (src/modules/federation/engine/delivery.ts),
// against the service's own database: DOMAIN_BREAKER_THRESHOLD failed attempts in a row to one
// remote server open its circuit (its jobs are deferred, no attempt counted) for a minute, the next
// threshold's worth for two; a success, or a 4xx about one activity, closes it; other domains are
// not touched. The attempts themselves are the webhook worker's (test/federation.test.ts sends them).
// And what the composer signs a delivery with: one signature, by the spec its server last accepted
// (read from the store at most once a minute), the other made only for a double knock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { createActivityComposer, DOMAIN_BREAKER_THRESHOLD } from "../src/modules/federation/engine/delivery.js";
import { createKeyStore } from "../src/modules/federation/engine/keys.js";
import { createKvStore } from "../src/modules/federation/engine/kv-store.js";
import type { ComposedRequest, MessageComposer } from "../src/outbound/composers.js";

let server: TestServer;
let t: TestTenant;
let composer: MessageComposer;
const run = Date.now().toString(36);
const DOWN = `down-${run}.example`;
const OTHER = `other-${run}.example`;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  const { sql, stores, secretBox, clock } = server.app.runtime.services;
  composer = createActivityComposer({ sql, keys: createKeyStore({ stores, secretBox }), kv: createKvStore({ sql, clock }) });
});
afterAll(() => server?.stop());

const job = (host: string) =>
  ({
    tenantId: t.tenantId,
    message: { inbox: `https://${host}/inbox`, activity: { type: "Create" }, keyId: `https://svc.example/ap/actor/${t.tenantId}#main-key` },
  }) as unknown as Parameters<MessageComposer["compose"]>[0];
const failed = (host: string, statusCode: number | null) =>
  ({ ok: false, statusCode, url: `https://${host}/inbox`, fallback: false }) as never;
const fine = (host: string) => ({ ok: true, statusCode: 202, url: `https://${host}/inbox`, fallback: false }) as never;
const deferredUntil = async (host: string, now: Date) => {
  const c = (await composer.compose(job(host), now)) as { defer?: Date };
  return c.defer?.getTime() ?? null;
};

describe("the per-domain breaker", () => {
  it("opens after the threshold of failures in a row, for longer each time; a success or a 4xx closes it", async () => {
    const t0 = new Date("2026-11-26T10:00:00.000Z");
    for (let i = 1; i < DOMAIN_BREAKER_THRESHOLD; i++) await composer.settled!(failed(DOWN, i % 2 ? 503 : null), t0);
    // one short of the threshold: still sent (composed and signed)
    expect(await deferredUntil(DOWN, t0)).toBeNull();
    await composer.settled!(failed(DOWN, 429), t0);
    expect(await deferredUntil(DOWN, t0)).toBe(t0.getTime() + 60_000);
    expect(await deferredUntil(OTHER, t0)).toBeNull();
    // after the cooldown it is tried again; another threshold's worth opens it for twice as long
    const t1 = new Date(t0.getTime() + 61_000);
    expect(await deferredUntil(DOWN, t1)).toBeNull();
    for (let i = 0; i < DOMAIN_BREAKER_THRESHOLD; i++) await composer.settled!(failed(DOWN, 500), t1);
    expect(await deferredUntil(DOWN, t1)).toBe(t1.getTime() + 120_000);
    // one success closes it
    await composer.settled!(fine(DOWN), t1);
    expect(await deferredUntil(DOWN, t1)).toBeNull();
    // a 404 is the receiver's answer about one activity, not its health: it closes it too
    for (let i = 0; i < DOMAIN_BREAKER_THRESHOLD; i++) await composer.settled!(failed(OTHER, 502), t1);
    expect(await deferredUntil(OTHER, t1)).toBe(t1.getTime() + 60_000);
    await composer.settled!(failed(OTHER, 404), t1);
    expect(await deferredUntil(OTHER, t1)).toBeNull();
  });
});

describe("what a delivery is signed with", () => {
  it("one signature, by the spec its server accepted (read once a minute); the other made only for a knock", async () => {
    const { sql, stores, secretBox, clock } = server.app.runtime.services;
    const kv = createKvStore({ sql, clock });
    let reads = 0;
    const counted: typeof kv = { ...kv, get: (key) => (reads++, kv.get(key)) };
    const c = createActivityComposer({ sql, keys: createKeyStore({ stores, secretBox }), kv: counted });
    const host = `spec-${run}.example`;
    const t0 = new Date("2026-11-26T10:00:00.000Z");
    const compose = async (now: Date) => (await c.compose(job(host), now)) as ComposedRequest;
    const rfc9421 = (h: Record<string, string> | undefined) => h?.["signature-input"] !== undefined && h["content-digest"] !== undefined;
    const cavage = (h: Record<string, string> | undefined) => h?.["signature-input"] === undefined && /keyId="/.test(h?.signature ?? "");

    const first = await compose(t0);
    expect(rfc9421(first.headers)).toBe(true);
    // a burst to one server: the store is read once
    for (let i = 0; i < 5; i++) expect(rfc9421((await compose(t0)).headers)).toBe(true);
    await c.settled!(fine(host), t0);
    expect(reads).toBe(1);
    // the other way, made when the worker asks (the first was refused)
    expect(cavage(await first.fallback!.headers())).toBe(true);
    // the server accepted the knock: its next delivery goes signed draft-cavage first, with RFC 9421 behind it
    await c.settled!({ ok: true, statusCode: 202, url: `https://${host}/inbox`, fallback: true } as never, t0);
    const next = await compose(t0);
    expect(cavage(next.headers)).toBe(true);
    expect(rfc9421(await next.fallback!.headers())).toBe(true);
    expect(reads).toBe(1);
    // a minute on, the store is read again (another instance's learning reaches this one)
    expect(cavage((await compose(new Date(t0.getTime() + 61_000))).headers)).toBe(true);
    expect(reads).toBe(2);
  });
});
