// The delivery worker's slots (src/outbound/slots.ts): claimed jobs start only within the in-flight
// caps (worker, endpoint, tenant), the next ready job starts the moment a slot frees, and jobs still
// waiting can be given back.
import { describe, expect, it } from "vitest";
import { createSlots } from "../../src/outbound/slots.js";

const job = (endpointId: string, tenantId = "t1") => ({ endpointId, tenantId });
const settled = async <T>(p: Promise<T>): Promise<T | "waiting"> =>
  Promise.race([p, new Promise<"waiting">((ok) => setTimeout(() => ok("waiting"), 5))]);

describe("webhook slots", () => {
  it("starts a job at once while its endpoint, tenant and the worker have room; the rest wait, ready", async () => {
    const slots = createSlots({ concurrency: 10, maxPerEndpoint: 2, maxPerTenant: 3 });
    const a = [job("e1"), job("e1"), job("e1")];
    const turns = a.map((j) => slots.take(j));
    expect(await settled(turns[0]!)).toBe(true);
    expect(await settled(turns[1]!)).toBe(true);
    expect(await settled(turns[2]!)).toBe("waiting"); // endpoint e1 at its cap of 2
    const other = slots.take(job("e2"));
    expect(await settled(other)).toBe(true); // tenant t1: 3 in flight now
    const fourth = slots.take(job("e3"));
    expect(await settled(fourth)).toBe("waiting"); // tenant at its cap
    expect(slots.held()).toBe(5);
    expect(slots.heldEndpoints.get("e1")).toBe(3);

    slots.done(a[0]!, true); // e1's slot frees: its ready job starts, not e3's (the tenant is full again)
    expect(await settled(turns[2]!)).toBe(true);
    expect(await settled(fourth)).toBe("waiting");
    slots.done(job("e2"), true);
    expect(await settled(fourth)).toBe(true);
    expect(slots.held()).toBe(3);
  });

  it("the worker's concurrency caps every endpoint together", async () => {
    const slots = createSlots({ concurrency: 2, maxPerEndpoint: 16, maxPerTenant: 32 });
    const turns = ["e1", "e2", "e3"].map((e) => slots.take(job(e, e)));
    expect(await Promise.all(turns.slice(0, 2))).toEqual([true, true]);
    expect(await settled(turns[2]!)).toBe("waiting");
    slots.done(job("e1", "e1"), true);
    expect(await settled(turns[2]!)).toBe(true);
  });

  it("gives back waiting jobs (of one endpoint, or all) without starting them", async () => {
    const slots = createSlots({ concurrency: 10, maxPerEndpoint: 1, maxPerTenant: 10 });
    const first = slots.take(job("e1"));
    const e1 = slots.take(job("e1"));
    const e2a = slots.take(job("e2"));
    const e2b = slots.take(job("e2"));
    expect(await Promise.all([first, e2a])).toEqual([true, true]);
    slots.cancelReady("e1");
    expect(await settled(e1)).toBe(false);
    expect(await settled(e2b)).toBe("waiting");
    slots.cancelReady();
    expect(await settled(e2b)).toBe(false);
    // a job given back unstarted frees its hold and no slot
    slots.done(job("e1"), false);
    slots.done(job("e2"), false);
    expect(slots.held()).toBe(2);
    slots.done(job("e1"), true);
    const again = slots.take(job("e1"));
    expect(await settled(again)).toBe(true);
  });
});
