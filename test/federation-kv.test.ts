// Fedify's key-value store over the service's database (src/modules/federation/engine/kv-store.ts):
// `list` answers the live entries under a prefix, the prefix itself included, with their keys as
// they were set (a part holding the separator or a backslash comes back whole); an expired entry is
// never listed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Temporal } from "@js-temporal/polyfill";
import { startServer, type TestServer } from "./support/server.js";
import { createKvStore } from "../src/modules/federation/engine/kv-store.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("the federation's KvStore", () => {
  it("lists the live entries under a prefix, keys as they were set", async () => {
    const { sql, clock } = server.app.runtime.services;
    const kv = createKvStore({ sql, clock });
    const run = `kv-${Date.now().toString(36)}`;
    await kv.set([run, "a"], 1);
    await kv.set([run, "b\u001fc", "d\\e"], { two: 2 });
    await kv.set([run], "itself");
    await kv.set([`${run}x`, "a"], "not under it");
    await kv.set([run, "gone"], 3, { ttl: Temporal.Duration.from({ milliseconds: -1 }) });
    const listed = [];
    for await (const e of kv.list([run])) listed.push(e);
    expect(listed).toEqual([
      { key: [run], value: "itself" },
      { key: [run, "a"], value: 1 },
      { key: [run, "b\u001fc", "d\\e"], value: { two: 2 } },
    ]);
  });
});
