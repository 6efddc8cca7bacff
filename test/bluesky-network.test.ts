// The Bluesky tests' local network (test/support/atproto-network.ts) on this machine: @atproto/dev-env's
// PDS and AppView on loopback, on the run's PostgreSQL and Redis. Two accounts post and reply over XRPC
// as a Bluesky app does; the AppView's public getPostThread — what the service reads a linked post's
// replies from (contract section 30) — shows the reply once indexed, and none once it is deleted.
import { AtpAgent } from "@atproto/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAtprotoNetwork, type AtprotoNetwork } from "./support/atproto-network.js";

let network: AtprotoNetwork;

beforeAll(async () => {
  network = await startAtprotoNetwork(
    `bsky_net_${process.pid}_${Date.now().toString(36)}`.replace(/[0-9]/g, (d) => "abcdefghij"[Number(d)]!),
  );
}, 90_000);
afterAll(async () => {
  await network?.stop();
});

describe("the local AT Protocol network", () => {
  it("indexes a post and a reply, and forgets the reply once it is deleted", async () => {
    const site = await network.account("alice");
    const reader = await network.account("carol");
    const post = await site.agent.post({ text: "A new article: https://blog.example/a", createdAt: new Date().toISOString() });
    const ref = { uri: post.uri, cid: post.cid };
    const reply = await reader.agent.post({ text: "A reply", reply: { root: ref, parent: ref }, createdAt: new Date().toISOString() });
    await network.indexed();
    const appView = new AtpAgent({ service: network.appView });
    const thread = await appView.app.bsky.feed.getPostThread({ uri: post.uri });
    const replies =
      (thread.data.thread as { replies?: Array<{ post: { uri: string; author: { did: string; handle: string } } }> }).replies ?? [];
    expect(replies.map((r) => r.post.uri)).toEqual([reply.uri]);
    expect(replies[0]!.post.author).toMatchObject({ did: reader.did, handle: "carol.test" });
    await reader.agent.deletePost(reply.uri);
    await network.indexed();
    const after = await appView.app.bsky.feed.getPostThread({ uri: post.uri });
    expect((after.data.thread as { replies?: unknown[] }).replies ?? []).toEqual([]);
  }, 60_000);
});
