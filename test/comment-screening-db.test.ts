// Screening's steps the write decides (5 to 8 of SCREENING, src/modules/comments/screening.ts): the
// one database function that decides them for a post and an edit alike, eng_screen_comment
// (prisma/sql/60-safety.sql), asked directly with what the list hands it. The same steps through the
// API are the safety tests' (safety-rules, trust-and-shadow-bans); their order against the list is
// test/unit/comment-screening.test.ts's.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";

let db: pg.Client;
beforeAll(async () => {
  db = new pg.Client({ connectionString: inject("databaseUrl") });
  await db.connect();
});
afterAll(() => db?.end());

const suspect = { source: "rule", rule: "suspectWords", words: ["maybe"] };
const banned = { source: "rule", rule: "bannedWords", words: ["spam"] };

interface Asked {
  action: "post" | "edit";
  trust?: "trusted" | "default" | "premoderated" | null;
  shadow?: boolean;
  status?: string | null;
  reason?: object | null;
  trustedStatus?: string | null;
  trustedReason?: object | null;
  hold?: number;
  current?: string | null;
}

/** What eng_screen_comment answers, for a reader with no comments (a tenant of nobody's). */
async function screen(a: Asked): Promise<unknown> {
  const [row] = (
    await db.query<{ r: unknown }>("SELECT eng_screen_comment($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS r", [
      "ten_screening_nobody",
      "rdr_nobody",
      a.action,
      a.trust === undefined ? "default" : a.trust,
      a.shadow ?? false,
      a.status === undefined ? (a.action === "post" ? "approved" : null) : a.status,
      a.reason ? JSON.stringify(a.reason) : null,
      a.trustedStatus === undefined ? (a.action === "post" ? "approved" : null) : a.trustedStatus,
      a.trustedReason ? JSON.stringify(a.trustedReason) : null,
      a.hold ?? 0,
      a.current ?? null,
    ])
  ).rows;
  return row!.r;
}

describe("a post's steps 5 to 7", () => {
  it("changes nothing for the usual post (a reader of the default level, no shadow ban, no hold)", async () => {
    expect(await screen({ action: "post" })).toBeNull();
    expect(await screen({ action: "post", status: "pending", reason: suspect })).toBeNull();
  });

  it("5. trust: a trusted reader takes the trusted verdict; a premoderated reader's comment that would be approved is held", async () => {
    expect(await screen({ action: "post", trust: "trusted", status: "pending", reason: suspect })).toEqual({ status: "approved" });
    expect(
      await screen({
        action: "post",
        trust: "trusted",
        status: "rejected",
        reason: banned,
        trustedStatus: "rejected",
        trustedReason: banned,
      }),
    ).toEqual({
      status: "rejected",
      reason: banned,
    });
    expect(await screen({ action: "post", trust: "premoderated" })).toEqual({
      status: "pending",
      reason: { source: "trust", trustLevel: "premoderated" },
    });
    expect(await screen({ action: "post", trust: "premoderated", status: "rejected", reason: banned })).toEqual({
      status: "rejected",
      reason: banned,
    });
  });

  it("6. shadowBan: stored rejected with its own reason, unless rejected already", async () => {
    expect(await screen({ action: "post", shadow: true, status: "pending", reason: suspect })).toEqual({
      status: "rejected",
      reason: { source: "shadow_ban" },
    });
    expect(await screen({ action: "post", shadow: true, status: "rejected", reason: banned })).toEqual({
      status: "rejected",
      reason: banned,
    });
  });

  it("7. newReaderHold: holds a new reader's comment no step gave a reason for; not a trusted reader's", async () => {
    expect(await screen({ action: "post", trust: null, hold: 2 })).toEqual({
      status: "pending",
      reason: { source: "new_reader", newReaderHold: 2, earlierComments: 0 },
    });
    expect(await screen({ action: "post", hold: 2, status: "pending", reason: suspect })).toEqual({ status: "pending", reason: suspect });
    expect(await screen({ action: "post", trust: "trusted", hold: 2 })).toEqual({ status: "approved" });
  });
});

describe("an edit's steps 5 and 8", () => {
  it("changes nothing when nothing objected, or a trusted reader's banned words did not", async () => {
    expect(await screen({ action: "edit", current: "approved" })).toBeNull();
    expect(await screen({ action: "edit", trust: "trusted", status: "pending", reason: suspect, current: "approved" })).toBeNull();
    expect(await screen({ action: "edit", trust: "premoderated", current: "approved" })).toBeNull();
  });

  it("8. editNeverLoosens: holds or rejects a published comment, rejects a held one, records the reason of a verdict it already has", async () => {
    expect(await screen({ action: "edit", status: "pending", reason: suspect, current: "approved" })).toEqual({
      status: "pending",
      reason: suspect,
    });
    expect(await screen({ action: "edit", status: "rejected", reason: banned, current: "pending" })).toEqual({
      status: "rejected",
      reason: banned,
    });
    expect(await screen({ action: "edit", status: "pending", reason: suspect, current: "pending" })).toEqual({
      status: null,
      reason: suspect,
    });
    expect(await screen({ action: "edit", status: "pending", reason: suspect, current: "rejected" })).toBeNull();
    // a shadow ban and the new-reader hold are a post's: an edit is not judged by them
    expect(await screen({ action: "edit", shadow: true, hold: 2, current: "approved" })).toBeNull();
  });
});
