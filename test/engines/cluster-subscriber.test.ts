// Sharded subscriptions on a Redis Cluster (src/lib/redis-subscriber.ts), on a cluster of the test's
// own: each channel is an SSUBSCRIBE on the master serving its slot; a lost master loses (and, when
// it is back, restores) exactly its channels while the others keep their messages; a slot moved to
// another master takes its channels along. And the slot of a key is the one Redis computes.
import { execFileSync } from "node:child_process";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { keySlot } from "../../src/lib/cluster-slot.js";
import { createCommandConnection } from "../../src/lib/redis-connection.js";
import { createSubscriber, type RedisSubscriber } from "../../src/lib/redis-subscriber.js";
import { startRedisCluster, type RedisCluster } from "../support/redis-cluster.js";

const WAIT = { timeout: 15_000, interval: 20 };

let cluster: RedisCluster;
let cmd: Cluster;
let sub: RedisSubscriber;
const got: [string, string][] = [];
const lost: string[][] = [];
const restored: string[][] = [];

const cli = (node: string, ...args: string[]) =>
  execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", node.split(":")[1]!, ...args], { encoding: "utf8" }).trim();
const ownerOf = (channel: string) => cmd.slots[keySlot(channel)]![0]!;
const received = (channel: string, message: string) => got.some(([c, m]) => c === channel && m === message);

beforeAll(async () => {
  cluster = await startRedisCluster();
  const target = { clusterNodes: cluster.nodes };
  cmd = createCommandConnection(target, { name: "subscriber-test" }) as Cluster;
  await new Promise((resolve) => cmd.once("ready", resolve));
  sub = createSubscriber(target, {
    name: "subscriber-test:sub",
    topology: cmd,
    onMessage: (c, m) => void got.push([c, m]),
    onLost: (c) => void lost.push(c),
    onRestored: (c) => void restored.push(c),
  });
}, 60_000);
afterAll(async () => {
  await sub?.close();
  cmd?.disconnect();
  await cluster?.stop();
});

describe("sharded subscriptions", () => {
  it("a slot's key or channel is where Redis puts it, hash tags included", async () => {
    const keys = ["foo", "eng:ev:ten_a:d1", "eng:sc:{ten_a}:i", "eng:sc:{ten_a}:n:abc", "a{}b", "{}{x}", "x{y", "héllo{wörld}"];
    for (const k of keys) expect([k, keySlot(k)]).toEqual([k, await cmd.cluster("KEYSLOT", k)]);
  });

  it("loses and restores exactly a lost master's channels; the other shards' messages keep flowing", async () => {
    const channels = Array.from({ length: 12 }, (_, i) => `sub-test:${i}`);
    for (const c of channels) await sub.subscribe(c);
    const victim = cluster.nodes[0]!;
    const onVictim = channels.filter((c) => ownerOf(c) === victim).sort();
    const elsewhere = channels.find((c) => ownerOf(c) !== victim)!;
    expect(onVictim.length).toBeGreaterThan(0);
    for (const c of channels) {
      await cmd.spublish(c, "before");
      await vi.waitFor(() => expect(received(c, "before")).toBe(true), WAIT);
    }

    await cluster.kill(0);
    await vi.waitFor(() => expect(lost.flat().sort()).toEqual(onVictim), WAIT);
    await cmd.spublish(elsewhere, "during");
    await vi.waitFor(() => expect(received(elsewhere, "during")).toBe(true), WAIT);
    expect(restored).toEqual([]);

    await cluster.restart(0);
    await vi.waitFor(() => expect(restored.flat().sort()).toEqual(onVictim), WAIT);
    for (const c of onVictim) {
      await cmd.spublish(c, "after");
      await vi.waitFor(() => expect(received(c, "after")).toBe(true), WAIT);
    }
  }, 60_000);

  it("a channel whose slot moves to another master is subscribed there", async () => {
    const channel = "sub-test:moving";
    await sub.subscribe(channel);
    const slot = String(keySlot(channel));
    const from = ownerOf(channel);
    const to = cluster.nodes.find((n) => n !== from)!;
    const toId = cli(to, "cluster", "myid");
    restored.length = 0;
    // an empty slot changes hands (CLUSTER SETSLOT on both sides, then everywhere)
    cli(to, "cluster", "setslot", slot, "importing", cli(from, "cluster", "myid"));
    cli(from, "cluster", "setslot", slot, "migrating", toId);
    for (const n of cluster.nodes) cli(n, "cluster", "setslot", slot, "node", toId);
    await vi.waitFor(() => expect(restored.flat()).toContain(channel), WAIT);
    await vi.waitFor(async () => {
      await cmd.spublish(channel, "moved");
      expect(received(channel, "moved")).toBe(true);
    }, WAIT);
    expect(ownerOf(channel)).toBe(to);
  });

  it("channels of several slots that move to one master together are each subscribed there (one SSUBSCRIBE a slot)", async () => {
    const from = cluster.nodes[1]!;
    const to = cluster.nodes.find((n) => n !== from)!;
    // three channels of three different slots, all served by `from`
    const moving: string[] = [];
    for (let i = 0; moving.length < 3; i++) {
      const c = `sub-test:together:${i}`;
      if (ownerOf(c) === from && !moving.some((m) => keySlot(m) === keySlot(c))) moving.push(c);
    }
    for (const c of moving) await sub.subscribe(c);
    const toId = cli(to, "cluster", "myid");
    const fromId = cli(from, "cluster", "myid");
    restored.length = 0;
    for (const c of moving) {
      const slot = String(keySlot(c));
      cli(to, "cluster", "setslot", slot, "importing", fromId);
      cli(from, "cluster", "setslot", slot, "migrating", toId);
    }
    for (const c of moving) for (const n of cluster.nodes) cli(n, "cluster", "setslot", String(keySlot(c)), "node", toId);
    await vi.waitFor(
      () =>
        expect(
          restored
            .flat()
            .filter((c) => moving.includes(c))
            .sort(),
        ).toEqual([...moving].sort()),
      WAIT,
    );
    for (const c of moving) {
      await vi.waitFor(async () => {
        await cmd.spublish(c, "moved together");
        expect(received(c, "moved together")).toBe(true);
      }, WAIT);
      expect(ownerOf(c)).toBe(to);
    }
  });
});
