// The Redis connection factory (src/lib/redis-connection.ts) against the machine's Redis: a
// subscriber connection survives a subscription written while it is still being set up (ioredis
// writes SUBSCRIBE / SSUBSCRIBE at once then, and a ready check or CLIENT SETINFO after it would be
// refused in subscriber mode and drop the connection); the target follows the configuration.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createSubscriberConnection, redisTargetOf } from "../../src/lib/redis-connection.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const open: Redis[] = [];
afterAll(() => {
  for (const c of open) c.disconnect();
});

describe("subscriber connections", () => {
  for (const command of ["subscribe", "ssubscribe"] as const) {
    it(`stay up when a ${command.toUpperCase()} is written while the connection is being set up`, async () => {
      const channel = `test-${randomUUID()}`;
      const conn = createSubscriberConnection({ url: REDIS_URL }, { name: `test-${command}` });
      open.push(conn);
      const errors: string[] = [];
      conn.on("error", (err: Error) => errors.push(err.message));
      let reconnects = 0;
      conn.on("reconnecting", () => void reconnects++);
      const subscribed = new Promise<unknown>((resolve, reject) =>
        conn.once("connect", () => {
          expect(conn.status).toBe("connect"); // not ready yet: ioredis writes the command at once
          conn[command](channel).then(resolve, reject);
        }),
      );
      await subscribed;
      await vi.waitFor(() => expect(conn.status).toBe("ready"), { timeout: 2_000 });
      const got = new Promise<string>((resolve) =>
        conn.once(command === "subscribe" ? "message" : "smessage", (_c: string, m: string) => resolve(m)),
      );
      const pub = new Redis(REDIS_URL);
      open.push(pub);
      await pub.call(command === "subscribe" ? "PUBLISH" : "SPUBLISH", channel, "hello");
      expect(await Promise.race([got, new Promise((resolve) => setTimeout(() => resolve("(nothing within 3 s)"), 3_000))])).toBe("hello");
      expect(errors).toEqual([]);
      expect(reconnects).toBe(0);
    });
  }
});

describe("the target", () => {
  it("is the cluster when REDIS_CLUSTER_NODES is set, else REDIS_URL, else none", () => {
    expect(redisTargetOf({ REDIS_CLUSTER_NODES: ["a:1", "b:2"] })).toEqual({ clusterNodes: ["a:1", "b:2"] });
    expect(redisTargetOf({ REDIS_URL: "redis://x:6379", REDIS_CLUSTER_NODES: [] })).toEqual({ url: "redis://x:6379" });
    expect(redisTargetOf({ REDIS_CLUSTER_NODES: [] })).toBeUndefined();
  });
});
