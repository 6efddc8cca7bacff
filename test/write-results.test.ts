// Every write function, run once against the database with its generated signature
// (src/generated/db-functions.ts), answers what src/events/write-results.ts declares: its row, its
// events, and each event's data as its type declares it. The schemas are strict, so a member a
// function adds, drops or renames fails here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent, positionalArgs, WRITE_TEXT } from "../src/events/statement.js";
import {
  appendedEvent,
  EVENT_DATA,
  WRITE_ROWS,
  writeResult,
  writtenCommentRow,
  type PostedCommentRow,
  type WriteFunction,
  type WrittenCommentRow,
} from "../src/events/write-results.js";
import { commentFromPosted, commentFromRow, commentToJson, newCommentText, shownComment } from "../src/modules/comments/dto.js";
import { envelopeMembers } from "../src/events/stored-envelope.js";
import type { CommentStatus } from "../src/generated/prisma/enums.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../src/modules/comments/comment-row.js";
import { jsonText, type DbArgs } from "../src/generated/db-functions.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const ran = new Set<WriteFunction>();

/** Runs the write's own statement; parses the whole result, then each event's data by its type. */
async function write<F extends WriteFunction>(fn: F, args: Omit<DbArgs<F>, "tenant" | "at"> & { at?: Date }) {
  const full = { tenant: t.tenantId, at: new Date(), ...args } as DbArgs<F>;
  const [out] = await server.app.runtime.services.sql.query<{ r: unknown }>(WRITE_TEXT[fn], positionalArgs(fn, full));
  // json, or JSON as text (a post's answer): parsed as runWrite parses it
  const result = writeResult(fn).parse(typeof out!.r === "string" ? JSON.parse(out!.r) : out!.r);
  for (const e of result.events) EVENT_DATA[e.envelope.type].parse(e.envelope.data);
  ran.add(fn);
  return { row: result.row, types: result.events.map((e) => e.envelope.type) };
}

/** A post with the comment's JSON and the event's members built as the request builds them (src/modules/comments/write.ts). */
const post = (id: string, reader: string, more: { parent?: string; status?: string; discussion?: string } = {}) => {
  const at = new Date();
  const discussion = more.discussion ?? "wr-d";
  const author = {
    id: reader,
    name: `Reader ${reader}`,
    avatarUrl: reader === "wr-ann" ? "https://img.example/ann.png" : null,
    badge: reader === "wr-ann" ? "Staff" : null,
  };
  const status = (more.status ?? "approved") as CommentStatus;
  return write("eng_post_comment", {
    discussion,
    id,
    reader,
    name: author.name,
    avatar: author.avatarUrl,
    badge: author.badge,
    body: `body of ${id}`,
    bodyHtml: `<p>body of ${id}</p>`,
    parent: more.parent ?? null,
    status,
    reason: more.status === "pending" ? jsonText({ source: "hook", detail: "held" }) : null,
    trustedStatus: "approved",
    trustedReason: null,
    hold: 0,
    at,
    kind: null,
    createdAt: null,
    comment: newCommentText({
      id,
      discussionId: discussion,
      parentId: more.parent ?? null,
      author,
      body: `body of ${id}`,
      bodyHtml: `<p>body of ${id}</p>`,
      status,
      createdAt: at,
      kind: "comment",
    }),
    eventMembers: envelopeMembers("comment_created", t.tenantId, discussion, at),
    atText: JSON.stringify(at.toISOString()),
  });
};

describe("the write functions answer what write-results.ts declares", () => {
  it("runs each one once and parses its row, its events and their data", async () => {
    expect((await post("wr-c1", "wr-ann")).types).toEqual(["comment_created"]);
    const reply = await post("wr-c2", "wr-bob", { parent: "wr-c1" });
    expect(reply.types).toEqual(["comment_created", "notification_reply"]);
    expect(reply.row).toMatchObject({ comment: { id: "wr-c2", parentId: "wr-c1" }, depth: 1 });
    // a held reply: its first approval announces it with the parent author's notification (eng_announce)
    expect((await post("wr-c3", "wr-bob", { parent: "wr-c1", status: "pending" })).types).toEqual(["comment_created"]);
    const held = await post("wr-c4", "wr-bob", { status: "pending" });
    // what a post answers is the comment's row as eng_comment_row reads it back, once made whole
    // (commentFromPosted); a whole row (a result recorded before the answer's shape) reads as itself
    for (const [id, posted] of [
      ["wr-c2", reply.row],
      ["wr-c4", held.row],
    ] as const) {
      const [stored] = await server.app.runtime.services.sql.query<{ r: WrittenCommentRow }>(
        "SELECT eng_comment_row(c) AS r FROM comments c WHERE tenant_id = $1 AND id = $2",
        [t.tenantId, id],
      );
      const whole = writtenCommentRow.parse(stored!.r);
      expect(commentFromPosted(t.tenantId, posted as PostedCommentRow)).toEqual(commentFromRow(whole));
      expect(commentFromPosted(t.tenantId, whole)).toEqual(commentFromRow(whole));
    }
    expect(held.row).toMatchObject({ publishedAt: null, moderationReason: { source: "hook", detail: "held" } });
    // a remote reply answers as a post does
    const remote = await write("eng_post_remote_comment", {
      discussion: "wr-d",
      id: "wr-r1",
      reader: "ap:https://peer.example/users/cat",
      name: "Cat",
      avatar: null,
      badge: null,
      body: "from afar",
      bodyHtml: "<p>from afar</p>",
      parent: "wr-c1",
      status: "approved",
      reason: null,
      trustedStatus: "approved",
      trustedReason: null,
      hold: 0,
      kind: null,
      createdAt: null,
      // what the request did not build, the database does
      comment: null,
      eventMembers: null,
      atText: null,
      network: "fediverse",
      remoteId: "https://peer.example/notes/wr-r1",
      remoteActor: "https://peer.example/users/cat",
      remoteHash: null,
    });
    expect(remote.types).toEqual(["comment_created", "notification_reply"]);
    expect(remote.row).toMatchObject({ comment: { id: "wr-r1", parentId: "wr-c1" }, depth: 1 });
    // and a Bluesky reply, of kind bluesky
    const bluesky = await write("eng_post_remote_comment", {
      discussion: "wr-d",
      id: "wr-b1",
      reader: "at:did:plc:abcdefghijklmnopqrstuvwx",
      name: "Bee",
      avatar: null,
      badge: null,
      body: "from Bluesky",
      bodyHtml: "<p>from Bluesky</p>",
      parent: null,
      status: "approved",
      reason: null,
      trustedStatus: "approved",
      trustedReason: null,
      hold: 0,
      kind: null,
      createdAt: new Date("2026-01-02T03:04:05Z"),
      comment: null,
      eventMembers: null,
      atText: null,
      network: "bluesky",
      remoteId: "at://did:plc:abcdefghijklmnopqrstuvwx/app.bsky.feed.post/3kwr",
      remoteActor: null,
      remoteHash: "0".repeat(64),
    });
    expect(bluesky.types).toEqual(["comment_created"]);
    expect(bluesky.row).toMatchObject({ comment: { id: "wr-b1", kind: "bluesky", createdAt: "2026-01-02T03:04:05.000Z" } });

    const edited = await write("eng_edit_comment", {
      id: "wr-c2",
      reader: "wr-bob",
      moderator: false,
      body: "edited",
      bodyHtml: "<p>edited</p>",
      windowSeconds: 0,
      verdict: null,
      reason: null,
      trustedVerdict: null,
      trustedReason: null,
    });
    expect([edited.row.body, edited.types]).toEqual(["edited", ["comment_edited"]]);
    const toggled = await write("eng_toggle_reaction", {
      comment: "wr-c1",
      reader: "wr-bob",
      name: "Reader wr-bob",
      avatar: null,
      moderator: false,
      kind: "like",
    });
    expect([toggled.row, toggled.types]).toEqual([
      { commentId: "wr-c1", readerId: "wr-bob", kind: "like", active: true, counts: { like: 1 } },
      ["reaction_toggled"],
    ]);
    // a remote Like answers as a toggle does
    const liked = await write("eng_toggle_remote_reaction", {
      comment: "wr-c1",
      reader: "ap:https://peer.example/users/cat",
      name: "Cat",
      avatar: null,
      moderator: false,
      kind: "like",
      remoteObject: "https://peer.example/likes/wr-l1",
      remoteActor: "https://peer.example/users/cat",
    });
    expect([liked.row, liked.types]).toEqual([
      { commentId: "wr-c1", readerId: "ap:https://peer.example/users/cat", kind: "like", active: true, counts: { like: 2 } },
      ["reaction_toggled"],
    ]);
    const paged = await write("eng_toggle_discussion_reaction", {
      discussion: "wr-d",
      reader: "wr-bob",
      name: "Reader wr-bob",
      avatar: null,
      kind: "heart",
    });
    expect([paged.row, paged.types]).toEqual([
      { discussionId: "wr-d", commentId: null, readerId: "wr-bob", kind: "heart", active: true, counts: { heart: 1 } },
      ["reaction_toggled"],
    ]);
    const voted = await write("eng_vote", {
      comment: "wr-c1",
      reader: "wr-bob",
      name: "Reader wr-bob",
      avatar: null,
      moderator: false,
      value: -1,
    });
    expect([voted.row, voted.types]).toEqual([
      { commentId: "wr-c1", readerId: "wr-bob", kind: "vote", value: -1, score: -1, upvotes: 0, downvotes: 1 },
      ["reaction_toggled"],
    ]);
    const reported = await write("eng_report_comment", {
      comment: "wr-c1",
      id: "wr-r1",
      reader: "wr-cat",
      name: "Reader wr-cat",
      avatar: null,
      reason: "spam",
      note: "a note",
      threshold: 5,
      hold: true,
    });
    expect(reported.row).toMatchObject({ created: true, report: { id: "wr-r1", reason: "spam", status: "open" } });
    const approved = await write("eng_set_comment_status", { id: "wr-c3", to: "approved" });
    expect(approved.types).toEqual(["comment_approved", "comment_created", "notification_reply"]);
    // a chat alert's link: both of its alert's links spent, the comment approved as by a moderator
    await post("wr-c5", "wr-cat", { status: "pending" });
    await server.app.runtime.services.sql.query(
      `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, data, created_at, expires_at)
       SELECT $1, 'alert_link', h, '{}'::jsonb, now(), now() + interval '1 day' FROM unnest($2::text[]) h`,
      [t.tenantId, ["wr-ha", "wr-hr"]],
    );
    const decided = await write("eng_decide_by_alert_link", {
      id: "wr-c5",
      to: "approved",
      revision: 0,
      link: "wr-hr",
      links: ["wr-ha", "wr-hr"],
    });
    expect([decided.row.spent, decided.row.acted, decided.row.comment.status, decided.types]).toEqual([
      true,
      true,
      "approved",
      ["comment_approved", "comment_created"],
    ]);
    expect((await write("eng_set_comment_pinned", { id: "wr-c1", pinned: true })).row.pinned).toBe(true);
    const banned = await write("eng_ban_reader", {
      reader: "wr-bob",
      id: "wr-b1",
      until: null,
      reason: "spam",
      by: "admin",
      rejectPending: true,
      shadow: false,
    });
    expect([banned.row, banned.types]).toEqual([
      { sanction: { until: null, reason: "spam", shadow: false, createdAt: expect.any(String) }, rejected: 1 },
      ["comment_rejected"],
    ]);
    // a webmention (contract section 24): posted as a comment of kind mention, a re-send edits it, its removal deletes it
    const mention = {
      source: "https://site.example/a",
      target: "https://blog.example/wr",
      discussion: "wr-d",
      id: "wr-m1",
      reader: "wm:https://site.example",
      name: "Site",
      avatar: null,
      body: "mentioned",
      bodyHtml: "<p>mentioned</p>",
      status: "approved",
      hold: 0,
      published: new Date("2026-01-02T03:04:05Z"),
    };
    const accepted = await write("eng_accept_mention", mention);
    expect([accepted.row.kind, accepted.row.createdAt, accepted.types]).toEqual([
      "mention",
      "2026-01-02T03:04:05.000Z",
      ["comment_created"],
    ]);
    const again = await write("eng_accept_mention", { ...mention, id: "wr-m2", body: "changed", bodyHtml: "<p>changed</p>" });
    expect([again.row.id, again.types]).toEqual(["wr-m1", ["comment_edited"]]);
    const removed = await write("eng_remove_mention", { source: mention.source, target: mention.target, status: "removed", error: "gone" });
    expect([removed.row?.status, removed.types]).toEqual(["deleted", ["comment_deleted"]]);
    expect(
      (await write("eng_remove_mention", { source: "https://none.example/", target: mention.target, status: "rejected", error: "x" })).row,
    ).toBeNull();
    const deleted = await write("eng_delete_comment", { id: "wr-c2", reader: null, moderator: true });
    expect([deleted.row.status, deleted.types]).toEqual(["deleted", ["comment_deleted"]]);
    const locked = await write("eng_set_discussion_state", { id: "wr-d", to: "locked", event: "discussion_locked" });
    expect([locked.row.state, locked.types]).toEqual(["locked", ["discussion_locked"]]);
    // auto-close: a discussion past its tenant's autoLockAfterDays, locked as by POST …/lock
    expect((await t.api.patch("/api/v1/settings", { autoLockAfterDays: 1 })).status).toBe(200);
    await write("eng_set_discussion_state", { id: "wr-d", to: "open", event: "discussion_unlocked" });
    const autoLocked = await write("eng_auto_lock_discussions", { limit: 10, at: new Date(Date.now() + 2 * 86_400_000) });
    expect([autoLocked.row, autoLocked.types]).toEqual([{ locked: 1 }, ["discussion_locked"]]);
    const erased = await write("eng_erase_reader_batch", {
      reader: "wr-bob",
      discussion: "wr-d",
      delete: true,
      marker: "[erased]",
      markerHtml: "<p>[erased]</p>",
      limit: 100,
    });
    expect(erased.row).toMatchObject({ done: true, removed: 3, tombstones: 0 });
    expect(erased.types).toEqual(["comment_deleted", "comment_deleted", "comment_deleted"]);

    expect([...ran].sort()).toEqual(Object.keys(WRITE_ROWS).sort());
  });

  it("makes a comment's public shape as eng_comment_json does, byte for byte, from a row already read (commentToJson)", async () => {
    // more states beside the first test's (replies, held, edited, deleted, erased, mentions): reactions, votes, a badge, an avatar
    await post("wr-s1", "wr-ann", { discussion: "wr-s" });
    await post("wr-s2", "wr-cat", { discussion: "wr-s", parent: "wr-s1" });
    await post("wr-s3", "wr-cat", { discussion: "wr-s", status: "pending" });
    await post("wr-s4", "wr-cat", { discussion: "wr-s" });
    await write("eng_toggle_reaction", {
      comment: "wr-s1",
      reader: "wr-cat",
      name: "Reader wr-cat",
      avatar: null,
      moderator: false,
      kind: "heart",
    });
    await write("eng_vote", { comment: "wr-s1", reader: "wr-cat", name: "Reader wr-cat", avatar: null, moderator: false, value: -1 });
    const edit = { reader: "wr-cat", moderator: false, body: "edited", bodyHtml: "<p>edited</p>", windowSeconds: 0 };
    const noVerdict = { verdict: null, reason: null, trustedVerdict: null, trustedReason: null };
    await write("eng_edit_comment", { id: "wr-s2", ...edit, ...noVerdict });
    await write("eng_delete_comment", { id: "wr-s4", reader: "wr-cat", moderator: false });
    const rows = await server.app.runtime.services.sql.query<CommentSqlRow & { json: unknown }>(
      `SELECT ${COMMENT_COLUMNS}, eng_comment_json(c) AS json FROM comments c
         JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id WHERE c.tenant_id = $1 ORDER BY c.id`,
      [t.tenantId],
    );
    expect(rows.length).toBeGreaterThan(6);
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(["approved", "pending", "deleted"]));
    for (const { json, ...row } of rows) {
      const c = rowToComment(row);
      expect(JSON.stringify(commentToJson(c)), row.id).toBe(JSON.stringify(json));
      // a moderator is shown it as it is
      expect(JSON.stringify(shownComment(c, true)), row.id).toBe(JSON.stringify(json));
    }
  });

  it("appends an event as the write functions do (eng_append_event)", async () => {
    const args = positionalArgs("eng_append_event", {
      tenant: t.tenantId,
      discussion: "wr-d",
      type: "comment_created",
      audience: "reader",
      reader: "wr-ann",
      data: jsonText({ note: "any data" }),
      at: new Date(),
    });
    const text = `SELECT eng_append_event(${args.map((_, i) => `$${i + 1}`).join(", ")}) AS r`;
    const [out] = await server.app.runtime.services.sql.query<{ r: unknown }>(text, args);
    expect(appendedEvent.parse(out!.r)).toMatchObject({
      audience: "reader",
      readerId: "wr-ann",
      jobs: 0,
      envelope: { type: "comment_created" },
    });
    const stored = await appendEvent(server.app.runtime.services, {
      tenantId: t.tenantId,
      discussionId: "wr-d",
      type: "discussion_locked",
      data: { discussion: { id: "wr-d" } },
      at: new Date(),
    });
    expect(stored).toMatchObject({
      audience: "all",
      readerId: null,
      envelope: { tenantId: t.tenantId, data: { discussion: { id: "wr-d" } } },
    });
    expect(stored.envelope.seq).toBe((appendedEvent.parse(out!.r).envelope.seq as number) + 1);
  });
});
