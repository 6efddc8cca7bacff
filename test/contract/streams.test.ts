// Black-box contract suite, the SSE stream: tickets, frames, replay, notifications, heartbeats,
// limits, tenants.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { afterAll, describe, expect, it } from "vitest";
import {
  ISO_MS,
  type Stream,
  api,
  contractRun,
  eventually,
  expectComment,
  expectEnvelope,
  expectProblem,
  expectStatus,
  openStream,
  sleep,
} from "../support/contract-client.js";

const { A, B, ada, bob, modKey, plainKey } = await contractRun();

// ───────────────────────────── stream ─────────────────────────────

describe("stream", { timeout: 60_000 }, () => {
  const open: Stream[] = [];
  const track = (s: Stream) => (open.push(s), s);
  afterAll(() => open.forEach((s) => s.close()));

  let ticketStream: Stream;
  let seqs: number[] = [];

  const ticket = async (discussionId: string, identityJwt?: string, key = A.apiKey) => {
    const res = await api.post("/stream/ticket", { key, identity: identityJwt, json: { discussionId } });
    expectStatus(res, 201);
    return res;
  };

  it("POST /stream/ticket → 201 {ticket, expiresAt}", async () => {
    expectStatus(await api.put("/discussions/d-s", { key: A.apiKey, json: { title: "Live" } }), 201);
    const res = await ticket("d-s");
    expect(Object.keys(res.body).sort()).toEqual(["expiresAt", "ticket"]);
    expect(typeof res.body.ticket).toBe("string");
    expect(res.body.expiresAt).toMatch(ISO_MS);
    // 60 s by default (checked by the integration tests); this server runs STREAM_TICKET_TTL_SECONDS=1
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
  });

  it("GET /stream/{id}?ticket= → text/event-stream; first frame `connected`; the ticket is single-use", async () => {
    const t = (await ticket("d-s")).body.ticket;
    ticketStream = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`));
    expect(ticketStream.res.status).toBe(200);
    expect(ticketStream.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await ticketStream.waitFor((f) => f.length >= 1);
    const first = ticketStream.frames[0]!;
    expect(first.event).toBe("connected");
    expect(Object.keys(first.data).sort()).toEqual(["discussionId", "heartbeatSeconds", "replayed", "truncated"]);
    expect(first.data.discussionId).toBe("d-s");
    expect(first.data.replayed).toBe(0);
    expect(first.data.truncated).toBe(false);
    expect(typeof first.data.heartbeatSeconds).toBe("number");
    // without Last-Event-ID its id is the discussion's latest seq (asserted with the first event below)
    expect(first.id).toMatch(/^\d+$/);

    const second = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`);
    second.close();
    expect(second.res.status).toBe(401);
  });

  it("a posted comment arrives framed id: <seq> / event: comment_created / data: <envelope>", async () => {
    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "live!" } });
    expectStatus(c, 201);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "comment_created"));
    const f = ticketStream.frames.find((x) => x.event === "comment_created")!;
    expectEnvelope(f.data, "comment_created", "d-s", A.tenantId);
    expect(f.id).toBe(String(f.data.seq));
    expect(f.data.data.comment).toEqual(c.body);
    // the first event since the stream opened: `connected` carried the latest seq before it
    expect(ticketStream.events()[0]).toBe(f);
    expect(f.data.seq).toBe(Number(ticketStream.frames[0]!.id) + 1);
    seqs.push(f.data.seq);
  });

  it("reactions and discussion changes are framed too (reaction_toggled, discussion_locked/unlocked)", async () => {
    const cid = ticketStream.frames.find((x) => x.event === "comment_created")!.data.data.comment.id;
    expectStatus(await api.post(`/comments/${cid}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "wow" } }), 200);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "reaction_toggled"));
    const r = ticketStream.frames.find((x) => x.event === "reaction_toggled")!;
    expectEnvelope(r.data, "reaction_toggled", "d-s", A.tenantId);
    expect(Object.keys(r.data.data.reaction).sort()).toEqual(["active", "commentId", "counts", "kind", "readerId"]);
    expect(r.data.data.reaction).toMatchObject({ commentId: cid, kind: "wow", active: true });
    expect(r.data.data.reaction.counts.wow).toBe(1);

    expectStatus(await api.post("/discussions/d-s/lock", { key: modKey }), 200);
    expectStatus(await api.post("/discussions/d-s/unlock", { key: modKey }), 200);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "discussion_unlocked"));
    const l = ticketStream.frames.find((x) => x.event === "discussion_locked")!;
    expectEnvelope(l.data, "discussion_locked", "d-s", A.tenantId);
    expect(l.data.data.discussion.id).toBe("d-s");
    expect(l.data.data.discussion.state).toBe("locked");

    const ev = ticketStream.events();
    const ids = ev.map((x) => Number(x.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    seqs = ids;
  });

  it("edits, pins and deletions are framed as comment_edited / comment_pinned / comment_unpinned / comment_deleted", async () => {
    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "to change" } });
    expectStatus(c, 201);
    expectStatus(await api.patch(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada, json: { body: "changed" } }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/pin`, { key: modKey }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/unpin`, { key: modKey }), 200);
    expectStatus(await api.del(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada }), 204);
    const names = ["comment_created", "comment_edited", "comment_pinned", "comment_unpinned", "comment_deleted"];
    const about = () => ticketStream.events().filter((f) => f.data?.data?.comment?.id === c.body.id);
    await ticketStream.waitFor(() => about().length >= names.length);
    expect(about().map((f) => f.event)).toEqual(names);
    for (const f of about()) {
      expectEnvelope(f.data, f.event, "d-s", A.tenantId);
      expect(f.id).toBe(String(f.data.seq));
      expectComment(f.data.data.comment);
    }
    expect(about()[1]!.data.data.comment.body).toBe("changed");
    expect(about()[2]!.data.data.comment.pinned).toBe(true);
    expect(about()[4]!.data.data.comment.status).toBe("deleted");
    expect(about()[4]!.data.data.comment.body).toBe("");
  });

  it("?token=<apiKey> works (deprecated) with Deprecation: true and a Sunset date", async () => {
    const s = track(await openStream(`/stream/d-s?token=${A.apiKey}`));
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("deprecation")).toBe("true");
    const sunset = s.res.headers.get("sunset");
    expect(sunset).toBeTruthy();
    expect(Number.isNaN(Date.parse(sunset!))).toBe(false);
    await s.waitFor((f) => f[0]?.event === "connected");
    s.close();
  });

  it("X-API-Key works; no credentials / bogus ticket → 401; a ticket for another discussion is 401 whether it exists or not", async () => {
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("deprecation")).toBeNull();
    s.close();
    const none = await openStream("/stream/d-s");
    expect(none.res.status).toBe(401);
    expect(none.res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const bogus = await openStream("/stream/d-s?ticket=not-a-ticket");
    expect(bogus.res.status).toBe(401);
    expectStatus(await api.put("/discussions/d-s2", { key: A.apiKey, json: { title: "Other" } }), 201);
    const t = (await ticket("d-s")).body.ticket;
    const wrong = await api.get(`/stream/d-s2?ticket=${encodeURIComponent(t)}`);
    expectProblem(wrong, 401, "unauthenticated");
    // credentials before resources: a missing discussion answers the same, so a ticket tells nobody which exist
    const missing = await api.get(`/stream/d-no-such-discussion?ticket=${encodeURIComponent(t)}`);
    expectProblem(missing, 401, "unauthenticated");
    const { requestId: _w, ...wrongProblem } = wrong.body;
    const { requestId: _m, ...missingProblem } = missing.body;
    expect(missingProblem).toEqual(wrongProblem);
  });

  it("Last-Event-ID replays the events after that seq, then goes live", async () => {
    seqs = ticketStream.events().map((f) => Number(f.id)); // everything on d-s so far
    expect(seqs.length).toBeGreaterThanOrEqual(3);
    const after = seqs[0]!;
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey, "last-event-id": String(after) }));
    expect(s.res.status).toBe(200);
    const expected = seqs.filter((x) => x > after);
    await s.waitFor((f) => f.filter((x) => x.event !== "connected").length >= expected.length);
    expect(s.frames[0]!.event).toBe("connected");
    // `connected` carries the position the stream continues after: the given id, so ids never go backwards
    expect(s.frames[0]!.id).toBe(String(after));
    expect(s.frames[0]!.data.replayed).toBe(expected.length);
    expect(s.frames[0]!.data.truncated).toBe(false);
    expect(s.events().map((x) => Number(x.id))).toEqual(expected);

    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: bob, json: { body: "after replay" } });
    await s.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.id === c.body.id));
    s.close();
  });

  it("notification_reply goes only to the parent author's stream; pending comments never reach reader streams", async () => {
    const parent = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "reply to me" } });
    expectStatus(parent, 201);
    const adaTicket = (await ticket("d-s", ada)).body.ticket;
    const adaStream = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(adaTicket)}`));
    const anon = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    await adaStream.waitFor((f) => f[0]?.event === "connected");
    await anon.waitFor((f) => f[0]?.event === "connected");

    const child = await api.post("/discussions/d-s/comments", {
      key: A.apiKey,
      identity: bob,
      json: { body: "hi Ada", parentId: parent.body.id },
    });
    expectStatus(child, 201);
    await adaStream.waitFor((f) => f.some((x) => x.event === "notification_reply"));
    const n = adaStream.frames.find((x) => x.event === "notification_reply")!;
    expectEnvelope(n.data, "notification_reply", "d-s", A.tenantId);
    expect(Object.keys(n.data.data.notification).sort()).toEqual(["commentId", "discussionId", "parentId", "readerId"]);
    expect(n.data.data.notification).toMatchObject({ commentId: child.body.id, parentId: parent.body.id, discussionId: "d-s" });
    expect(n.data.data.notification.readerId).toBe(parent.body.author.id);

    await anon.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.id === child.body.id));
    await sleep(1_000);
    expect(anon.frames.some((x) => x.event === "notification_reply")).toBe(false);

    // pre-moderation: the pending comment does not appear on a reader stream (a browser's ticket stream)
    // (a) the README's flow: the backend mints the browser's ticket with its key (here: the bootstrap key)
    const readerTicket = (await ticket("d-s", bob)).body.ticket;
    const reader = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(readerTicket)}`));
    await reader.waitFor((f) => f[0]?.event === "connected");
    // (b) a ticket minted with a key without capabilities
    const plainTicket = (await ticket("d-s", bob, plainKey)).body.ticket;
    const plainReader = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(plainTicket)}`));
    await plainReader.waitFor((f) => f[0]?.event === "connected");
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { moderation: "pre" } }), 200);
    try {
      const pending = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: bob, json: { body: "secret" } });
      expectStatus(pending, 201);
      expect(pending.body.status).toBe("pending");
      const pendingByOther = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "also pending" } });
      expectStatus(pendingByOther, 201);
      expectStatus(await api.post(`/comments/${pendingByOther.body.id}/reject`, { key: modKey }), 200);
      expectStatus(await api.post("/discussions/d-s/lock", { key: modKey }), 200); // a marker event after them
      await anon.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      await reader.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      await plainReader.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      // the API-key stream: no comment_created for a pending comment
      expect(anon.frames.some((x) => x.event === "comment_created" && x.data?.data?.comment?.id === pending.body.id)).toBe(false);
      // a reader's stream: nothing at all about another reader's pending / rejected comment
      const leakedPlain = plainReader.frames.filter((x) => JSON.stringify(x.data).includes(pendingByOther.body.id));
      expect(
        leakedPlain.map((x) => [x.event, x.data?.data?.comment?.status]),
        "pending/rejected on a reader stream (plain-key ticket)",
      ).toEqual([]);
      const leaked = reader.frames.filter((x) => JSON.stringify(x.data).includes(pendingByOther.body.id));
      expect(
        leaked.map((x) => [x.event, x.data?.data?.comment?.status]),
        "pending/rejected on a reader stream",
      ).toEqual([]);
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { moderation: "post" } });
      await api.post("/discussions/d-s/unlock", { key: modKey });
    }
  });

  it("an id older than the replay window replays what is kept and sets truncated: true", async () => {
    expectStatus(await api.put("/discussions/d-r", { key: A.apiKey, json: { title: "Replay" } }), 201);
    const live = track(await openStream("/stream/d-r", { "x-api-key": A.apiKey }));
    await live.waitFor((f) => f[0]?.event === "connected");
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { replay: { maxEvents: 2 } } }), 200);
    // the contract does not say how fast a settings change reaches streams; the service documents
    // (docs/streams.md) that the instance that took it applies it to the next stream at once
    try {
      for (const body of ["r1", "r2", "r3", "r4"]) {
        expectStatus(await api.post("/discussions/d-r/comments", { key: A.apiKey, identity: ada, json: { body } }), 201);
      }
      await live.waitFor((f) => f.filter((x) => x.event === "comment_created").length === 4);
      const seq = live.events().map((f) => Number(f.id));
      const s = track(await openStream("/stream/d-r", { "x-api-key": A.apiKey, "last-event-id": String(seq[0]) }));
      await s.waitFor((f) => f[0]?.event === "connected");
      await sleep(300);
      const seen = JSON.stringify({ seq, connected: s.frames[0]!.data, replayedIds: s.events().map((f) => f.id) });
      expect(s.frames[0]!.data.truncated, seen).toBe(true);
      expect(s.frames[0]!.data.replayed).toBe(2);
      expect(s.events().map((f) => Number(f.id))).toEqual(seq.slice(2));
      // truncated: `connected` carries the seq just before the oldest kept event
      expect(s.frames[0]!.id, seen).toBe(String(seq[2]! - 1));
      s.close();
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { replay: { maxEvents: 1000 } } });
    }
  });

  it("a `:` comment heartbeat every heartbeatSeconds (15 s)", { timeout: 40_000 }, async () => {
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    await s.waitFor((f) => f[0]?.event === "connected");
    expect(s.frames[0]!.data.heartbeatSeconds).toBe(15);
    await eventually(() => expect(s.comments.length).toBeGreaterThanOrEqual(1), 18_000, 200);
    s.close();
  });

  it("after the maximum connection time (setting) the server sends `connection-timeout` and closes", { timeout: 40_000 }, async () => {
    const before = await api.get("/settings", { key: A.apiKey });
    // the contract names the setting but not its field; GET /settings shows it as stream.maxConnectionSeconds
    expect(before.body.stream?.maxConnectionSeconds, JSON.stringify(before.body)).toBe(1800);
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { stream: { maxConnectionSeconds: 2 } } }), 200);
    try {
      const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
      expect(s.res.status).toBe(200);
      await s.waitFor((f) => f.some((x) => x.event === "connection-timeout"), 10_000);
      await eventually(() => expect(s.ended).toBe(true), 5_000);
      expect(s.frames[0]!.event).toBe("connected");
      expect(s.frames.at(-1)!.event).toBe("connection-timeout");
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { stream: { maxConnectionSeconds: 1800 } } });
    }
  });

  it("a ticket expires after its TTL (60 s by default; 1 s here via STREAM_TICKET_TTL_SECONDS)", async () => {
    const minted = await ticket("d-s");
    const t = minted.body.ticket;
    expect(Date.parse(minted.body.expiresAt) - Date.now()).toBeLessThanOrEqual(1_000);
    await sleep(Math.max(0, Date.parse(minted.body.expiresAt) - Date.now()) + 100);
    const s = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`);
    s.close();
    expect(s.res.status).toBe(401);
  });

  it("another tenant cannot stream this tenant's discussion → 404", async () => {
    const s = await openStream("/stream/d-s", { "x-api-key": B.apiKey });
    s.close();
    expect(s.res.status).toBe(404);
    const t = await api.post("/stream/ticket", { key: B.apiKey, json: { discussionId: "d-s" } });
    if (t.status === 201) {
      const viaTicket = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t.body.ticket)}`);
      viaTicket.close();
      expect(viaTicket.res.status).toBe(404);
    } else expectProblem(t, 404, "not_found");
  });
});
