// A local AT Protocol network for the Bluesky tests (contract section 30: "tested against a real local
// network, never a mock of the XRPC calls"): test/support/atproto-network-child.mjs runs
// @atproto/dev-env's TestNetwork (PLC, PDS, AppView) in a process of its own, on the run's database
// (its schemas named after `schema`: letters and underscores) and Redis. Accounts, posts, replies
// and deletions are made over XRPC with @atproto/api's AtpAgent against its PDS, as a Bluesky app
// makes them; `indexed()` waits until the AppView has seen them.
import { fileURLToPath } from "node:url";
import { AtpAgent } from "@atproto/api";
import { inject } from "vitest";
import { spawnReady, stopChild } from "./process.js";

export interface AtprotoNetwork {
  pds: string;
  appView: string;
  /** an account on the PDS, signed in: its agent, did and handle */
  account(name: string): Promise<{ agent: AtpAgent; did: string; handle: string }>;
  /** resolves once the AppView has indexed everything written so far */
  indexed(): Promise<void>;
  stop(): Promise<void>;
}

const CHILD = fileURLToPath(new URL("atproto-network-child.mjs", import.meta.url));

export async function startAtprotoNetwork(schema: string): Promise<AtprotoNetwork> {
  if (!/^[A-Za-z_]+$/.test(schema)) throw new Error(`the network's schema must be letters and underscores: ${schema}`);
  const redis = new URL(inject("redisUrl"));
  const { proc, ready } = await spawnReady(
    CHILD,
    {
      ...process.env,
      DB_POSTGRES_URL: inject("databaseUrl"),
      DB_POSTGRES_SCHEMA: schema,
      REDIS_HOST: `${redis.hostname}:${redis.port || 6379}`,
    },
    60_000,
    [],
  );
  const at = JSON.parse(ready) as { pds: string; appView: string; control: string };
  return {
    pds: at.pds,
    appView: at.appView,
    async account(name) {
      const handle = `${name}.test`;
      const agent = new AtpAgent({ service: at.pds });
      await agent.createAccount({ handle, email: `${name}@example.com`, password: "hunter2-hunter2" });
      return { agent, did: agent.session!.did, handle };
    },
    async indexed() {
      const r = await fetch(`${at.control}/process-all`, { method: "POST" });
      if (r.status !== 204) throw new Error(`the network did not index: ${r.status} ${await r.text()}`);
    },
    stop: () => stopChild(proc),
  };
}
