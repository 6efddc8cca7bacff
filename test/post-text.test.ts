// A post's JSON is built by the request (src/modules/comments/dto.ts newCommentText, and the event's
// members: src/events/stored-envelope.ts envelopeMembers) and stored as text the database does not
// parse; the database builds the same JSON itself when it decides otherwise or is handed none
// (eng_comment_json_by, eng_envelope_members). The two builders are held to one shape here: the same
// members, in the same order, with the same values, for bodies and names that JSON must escape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { positionalArgs, WRITE_TEXT } from "../src/events/statement.js";
import { envelopeMembers } from "../src/events/stored-envelope.js";
import type { DbArgs } from "../src/generated/db-functions.js";
import type { CommentStatus } from "../src/generated/prisma/enums.js";
import { newCommentText } from "../src/modules/comments/dto.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const sql = () => server.app.runtime.services.sql;
/** JSON text as a value with its members' order: two texts are one shape when these are equal. */
const shape = (text: string) => JSON.stringify(JSON.parse(text));

interface Case {
  reader: string;
  name: string;
  avatar: string | null;
  badge: string | null;
  body: string;
  html: string;
  status: CommentStatus;
  parent?: string;
  bluesky?: Date;
}

/** Posts the case as the request does (its JSON handed over) or with nothing handed over; answers the answer's text and the event's stored envelope. */
async function post(id: string, c: Case, handed: boolean) {
  const at = new Date();
  const discussion = "pt-d";
  const common = {
    tenant: t.tenantId,
    discussion,
    id,
    reader: c.reader,
    name: c.name,
    avatar: c.avatar,
    badge: c.badge,
    body: c.body,
    bodyHtml: c.html,
    parent: c.parent ?? null,
    status: c.status,
    reason: null,
    trustedStatus: "approved",
    trustedReason: null,
    hold: 0,
    at,
    kind: null,
    createdAt: c.bluesky ?? null,
    comment: handed
      ? newCommentText({
          id,
          discussionId: discussion,
          parentId: c.parent ?? null,
          author: { id: c.reader, name: c.name, avatarUrl: c.avatar, badge: c.badge },
          body: c.body,
          bodyHtml: c.html,
          status: c.status,
          createdAt: c.bluesky ?? at,
          kind: c.bluesky ? "bluesky" : "comment",
        })
      : null,
    eventMembers: handed ? envelopeMembers("comment_created", t.tenantId, discussion, at) : null,
    atText: handed ? JSON.stringify(at.toISOString()) : null,
  };
  const out = c.bluesky
    ? await sql().query<{ r: string }>(
        WRITE_TEXT.eng_post_remote_comment,
        positionalArgs("eng_post_remote_comment", {
          ...common,
          network: "bluesky",
          remoteId: `at://did:plc:abcdefghijklmnopqrstuvwx/app.bsky.feed.post/${id}`,
          remoteActor: null,
          remoteHash: id.padEnd(64, "0"),
        } satisfies DbArgs<"eng_post_remote_comment">),
      )
    : await sql().query<{ r: string }>(
        WRITE_TEXT.eng_post_comment,
        positionalArgs("eng_post_comment", common satisfies DbArgs<"eng_post_comment">),
      );
  const [event] = await sql().query<{ envelope: string }>(
    "SELECT envelope FROM events WHERE tenant_id = $1 AND type = 'comment_created' AND envelope::json #>> '{data,comment,id}' = $2",
    [t.tenantId, id],
  );
  return { answer: out[0]!.r, envelope: event!.envelope, comment: common.comment, at };
}

/** The answer and envelope with what differs between two posts (ids, seqs, times) set aside. */
function comparable(p: { answer: string; envelope: string }) {
  const answer = JSON.parse(p.answer) as {
    row: { comment: Record<string, unknown>; publishedAt: string | null };
    events: { envelope: Record<string, unknown> }[];
  };
  const envelope = JSON.parse(p.envelope) as Record<string, unknown> & { data: { comment: Record<string, unknown> } };
  const clean = (o: Record<string, unknown>) => ({ ...o, id: "·", createdAt: "·", occurredAt: "·", seq: 0 });
  return JSON.stringify({
    row: { ...answer.row, comment: clean(answer.row.comment), publishedAt: answer.row.publishedAt === null ? null : "·" },
    events: answer.events.map((e) => ({
      ...e,
      envelope: { ...clean(e.envelope), data: { comment: clean((e.envelope.data as any).comment) } },
    })),
    envelope: { ...clean(envelope), data: { comment: clean(envelope.data.comment) } },
  });
}

const CASES: Record<string, Case> = {
  plain: { reader: "pt-ann", name: "Ann", avatar: null, badge: null, body: "hello", html: "<p>hello</p>", status: "approved" },
  "escapes, an avatar and a badge": {
    reader: 'pt-"q"\\b',
    name: 'Zoë "the \\ one" \u2028 \t <script>',
    avatar: 'https://img.example/a.png?x=1&y="2"',
    badge: "Staff ✓",
    body: 'quotes " and \\ and \n new lines, \u0001 a control, 😀 an emoji, </script>',
    html: "<p>quotes &quot; and \\ and<br>new lines</p>\n<p>😀 &lt;/script&gt;</p>",
    status: "approved",
  },
  held: { reader: "pt-bob", name: "Bob", avatar: null, badge: null, body: "held", html: "<p>held</p>", status: "pending" },
  "from Bluesky, written earlier": {
    reader: "at:did:plc:abcdefghijklmnopqrstuvwx",
    name: "Bee",
    avatar: null,
    badge: null,
    body: "from afar",
    html: "<p>from afar</p>",
    status: "approved",
    bluesky: new Date("2026-01-02T03:04:05.678Z"),
  },
};

describe("a post's JSON, built by the request or by the database", () => {
  for (const [name, c] of Object.entries(CASES)) {
    it(`is one shape: ${name}`, async () => {
      const handed = await post(`pt-h-${name.length}`, c, true);
      const built = await post(`pt-b-${name.length}`, c, false);
      expect(comparable(handed)).toBe(comparable(built));
      // what the request built is stored and answered as it is, not parsed and printed again
      expect(handed.envelope).toContain(handed.comment!);
      expect(handed.answer).toContain(handed.comment!);
    });
  }

  it("a reply: the same depth and the parent's author told, either way", async () => {
    const parent = await post("pt-parent", CASES.plain!, true);
    expect(JSON.parse(parent.answer).row.depth).toBe(0);
    const reply: Case = { ...CASES.held!, status: "approved", parent: "pt-parent" };
    const handed = await post("pt-r-h", reply, true);
    const built = await post("pt-r-b", reply, false);
    expect(comparable(handed)).toBe(comparable(built));
    expect(JSON.parse(handed.answer).events.map((e: any) => e.envelope.type)).toEqual(["comment_created", "notification_reply"]);
    expect(JSON.parse(handed.answer).row.depth).toBe(1);
  });

  it("the envelope's members: one shape and one time", async () => {
    const at = new Date("2026-03-04T05:06:07.089Z");
    const [row] = await sql().query<{ m: string }>("SELECT eng_envelope_members($1, $2, $3, $4) AS m", [
      t.tenantId,
      "pt-d:x.y_z-1",
      "comment_created",
      at,
    ]);
    const ours = envelopeMembers("comment_created", t.tenantId, "pt-d:x.y_z-1", at);
    expect(shape(`{${ours}}`)).toBe(shape(`{${row!.m}}`));
    expect(JSON.parse(`{${ours}}`)).toEqual({
      type: "comment_created",
      tenantId: t.tenantId,
      discussionId: "pt-d:x.y_z-1",
      occurredAt: at.toISOString(),
    });
  });

  it("the database's decision wins over what the request assumed: a trusted reader's comment is published", async () => {
    await sql().query(
      "INSERT INTO readers (tenant_id, id, name, trust_level, created_at, updated_at) VALUES ($1, 'pt-tom', 'Tom', 'trusted', now(), now())",
      [t.tenantId],
    );
    // held for any reader, published for a trusted one (screening's step 5, decided by the write)
    const handed = await post("pt-t", { ...CASES.plain!, reader: "pt-tom", name: "Tom", status: "pending" }, true);
    const answer = JSON.parse(handed.answer);
    expect(answer.row.comment.status).toBe("approved");
    expect(JSON.parse(handed.envelope).data.comment.status).toBe("approved");
    expect(answer.row.publishedAt).not.toBeNull();
  });
});
