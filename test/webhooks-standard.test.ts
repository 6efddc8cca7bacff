// Standard Webhooks (contract section 8): every delivery and handshake also carries webhook-id,
// webhook-timestamp and webhook-signature, verified here by the receivers' own libraries
// (`standardwebhooks`, and svix's), with the `standardWebhooksSecret` of creation and rotation.
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { startReceiver, type Received, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, startWebhookServer } from "./support/receiver-app.js";
import { standardWebhooksHeaders, standardWebhooksSecret } from "../src/outbound/signature.js";

let server: TestServer;
let t: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  server = await startWebhookServer();
  t = await createTestTenant(server);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

const headersOf = (r: Received) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

describe("Standard Webhooks", () => {
  it("deliveries verify with the standardwebhooks and svix libraries, using standardWebhooksSecret as it is", async () => {
    const before = receiver.deliveries().length;
    const ep = await createVerifiedEndpoint(t, receiver, { events: ["discussion_locked"] });
    const swSecret = ep.body.standardWebhooksSecret as string;
    expect(swSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await makeEvents(server, t, "sw-1", 1);
    await receiver.waitFor(() => receiver.deliveries().length === before + 1);
    const d = receiver.deliveries().at(-1)!;
    const h = headersOf(d);

    expect(h["webhook-id"]).toBe(h["x-service-idempotency-key"]);
    expect(Number(h["webhook-timestamp"])).toBe(Math.floor(Date.parse(h["x-service-timestamp"]!) / 1000));
    expect(h["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(swSecret).verify(d.raw, h)).toEqual(JSON.parse(d.raw));
    expect(new SvixWebhook(swSecret).verify(d.raw, h)).toEqual(JSON.parse(d.raw));
    // a tampered body or another secret fails
    expect(() => new Webhook(swSecret).verify(d.raw.replace("discussion_locked", "discussion_unlocked"), h)).toThrow();
    expect(() => new Webhook(standardWebhooksSecret("whsec_other")).verify(d.raw, h)).toThrow();
    // the X-Service scheme is unchanged beside it
    expect(h["x-service-signature"]).toMatch(new RegExp(`^t=\\d+,v1=[0-9a-f]{64},kid=${ep.kid}$`));
  });

  it("the handshake carries the three headers too, and verifies", async () => {
    const before = receiver.handshakes().length;
    const ep = await createVerifiedEndpoint(t, receiver, { events: ["*"] });
    const hs = receiver.handshakes().slice(before).at(-1)!;
    const h = headersOf(hs);
    expect(h["webhook-id"]).toMatch(/^verification:[0-9a-f-]{36}$/);
    expect(new Webhook(ep.body.standardWebhooksSecret).verify(hs.raw, h)).toMatchObject({ type: "verification" });
  });

  it("across a rotation: one signature entry per valid secret; receivers holding either secret verify", async () => {
    const own = await startReceiver(); // this endpoint's deliveries only
    const ep = await createVerifiedEndpoint(t, own, { events: ["discussion_locked", "discussion_unlocked"] });
    const oldSecret = ep.body.standardWebhooksSecret as string;
    const rot = await t.api.post(`/api/v1/webhooks/${ep.webhookId}/rotate-secret`);
    expect(rot.status).toBe(200);
    const newSecret = rot.body.standardWebhooksSecret as string;
    expect(newSecret).toBe(standardWebhooksSecret(rot.body.secret));
    expect(newSecret).not.toBe(oldSecret);

    await makeEvents(server, t, "sw-rot", 1);
    await own.waitFor(() => own.deliveries().length === 1);
    const d = own.deliveries()[0]!;
    await own.close();
    const h = headersOf(d);
    expect(h["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(new Webhook(newSecret).verify(d.raw, h)).toEqual(JSON.parse(d.raw));
    expect(new Webhook(oldSecret).verify(d.raw, h)).toEqual(JSON.parse(d.raw));
    expect(new SvixWebhook(oldSecret).verify(d.raw, h)).toEqual(JSON.parse(d.raw));
  });
});

describe("standardWebhooksHeaders", () => {
  it("signs `<id>.<timestamp>.<body>` with the secret's UTF-8 bytes, one entry per secret", () => {
    const at = new Date("2026-11-22T10:00:00.500Z");
    const h = standardWebhooksHeaders({ id: "comment_created:e1", timestamp: at, rawBody: '{"a":1}', secrets: ["whsec_a", "whsec_b"] });
    const sig = (k: string) => createHmac("sha256", k).update(`comment_created:e1.1795341600.{"a":1}`).digest("base64");
    expect(h).toEqual({
      "webhook-id": "comment_created:e1",
      "webhook-timestamp": "1795341600",
      "webhook-signature": `v1,${sig("whsec_a")} v1,${sig("whsec_b")}`,
    });
    expect(standardWebhooksSecret("whsec_a")).toBe(`whsec_${Buffer.from("whsec_a").toString("base64")}`);
  });
});
