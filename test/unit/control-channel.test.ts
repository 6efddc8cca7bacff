// The control channel (src/lib/control-channel.ts) on the machine's Redis: a message published by an
// instance whose command connection is still connecting (an instance just started, serving its first
// requests: a stream's reconnect that supersedes a connection held elsewhere) reaches the others.
import { afterEach, describe, expect, it, vi } from "vitest";
import pino from "pino";
import { createControlChannel, type ControlChannel } from "../../src/lib/control-channel.js";
import { closeConnection, createCommandConnection, type RedisClient } from "../../src/lib/redis-connection.js";

const target = { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" };
const log = pino({ level: "silent" });
const opened: { channel: ControlChannel; publisher: RedisClient }[] = [];

function instance(channel: string, onMessage: (m: string) => void, onListening?: (on: boolean) => void) {
  const publisher = createCommandConnection(target, { name: "control-channel-test" });
  const c = createControlChannel({ channel, redis: target, publisher, log, onMessage, ...(onListening ? { onListening } : {}) });
  opened.push({ channel: c, publisher });
  return { channel: c, publisher };
}

afterEach(async () => {
  for (const { channel, publisher } of opened.splice(0)) {
    channel.close();
    await closeConnection(publisher);
  }
});

describe("control channel", () => {
  it("delivers what an instance publishes before its command connection is ready", async () => {
    const name = `eng:test:control:${process.pid}:${Date.now()}`;
    const got: string[] = [];
    let listening = false;
    instance(
      name,
      (m) => void got.push(m),
      (on) => (listening = on),
    );
    await vi.waitFor(() => expect(listening).toBe(true));
    const fresh = instance(name, () => undefined);
    expect(fresh.publisher.status).not.toBe("ready"); // just made: still connecting
    for (let i = 1; i <= 20; i++) fresh.channel.publish(`takeover ${i}`);
    expect(fresh.publisher.listenerCount("ready")).toBeLessThanOrEqual(2); // one wait for the burst, beside ioredis's own
    await vi.waitFor(() => expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `takeover ${i + 1}`)));
  });
});
