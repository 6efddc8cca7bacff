// Black-box contract suite, comments (post, identity, replies, list and cursors, edit, delete,
// moderation) and reactions.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { describe, expect, it } from "vitest";
import {
  ISO_MS,
  api,
  contractRun,
  expectCollection,
  expectComment,
  expectProblem,
  expectStatus,
  identity,
  jwt,
  now,
  res_required,
} from "../support/contract-client.js";

const { A, B, ada, bob, modKey, plainKey } = await contractRun();

// ───────────────────────────── comments ─────────────────────────────

describe("comments", { timeout: 30_000 }, () => {
  let c1: any;
  let c2: any;
  let c3: any;
  let reply: any;

  it("POST /discussions/{id}/comments + identity → 201 with the contract's comment fields", async () => {
    expectStatus(await api.put("/discussions/d-c", { key: A.apiKey, json: { title: "Comments" } }), 201);
    const res = await api.post("/discussions/d-c/comments", { key: plainKey, identity: ada, json: { body: "First!" } });
    expectStatus(res, 201);
    expectComment(res.body);
    expect(res.body.discussionId).toBe("d-c");
    expect(res.body.parentId).toBeNull();
    expect(res.body.author.name).toBe("Ada");
    expect(res.body.body).toBe("First!");
    expect(res.body.status).toBe("approved");
    expect(res.body.pinned).toBe(false);
    expect(res.body.editedAt).toBeNull();
    expect(res.body.replyCount).toBe(0);
    c1 = res.body;
  });

  it("the comment carries exactly the contract's fields (no others)", () => {
    expect(c1).toBeDefined();
    expectComment(c1, true);
  });

  it("the identity's avatarUrl reaches the author", async () => {
    const id = identity(A.identitySecret, "u-cy", "Cy", { avatarUrl: "https://example.com/cy.png" });
    const res = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: id, json: { body: "with avatar" } });
    expectStatus(res, 201);
    expect(res.body.author).toEqual({ id: expect.any(String), name: "Cy", avatarUrl: "https://example.com/cy.png", badge: null });
    c2 = res.body;
  });

  it("posting to an unknown discussion creates it", async () => {
    const res = await api.post("/discussions/d-auto/comments", { key: A.apiKey, identity: ada, json: { body: "hello" } });
    expectStatus(res, 201);
    const d = await api.get("/discussions/d-auto", { key: A.apiKey });
    expectStatus(d, 200);
    expect(d.body.state).toBe("open");
  });

  it("missing or bad identity → 401 invalid_identity", async () => {
    const iat = now();
    const s = A.identitySecret;
    const cases: (string | undefined)[] = [
      undefined, // missing
      "not-a-jwt",
      jwt("wrong-secret-wrong-secret-wrong", { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }), // bad signature
      jwt(s, { sub: "u-ada", name: "Ada", iat: iat - 1200, exp: iat - 600 }), // expired
      jwt(s, { sub: "u-ada", name: "Ada", iat }), // no exp
      jwt(s, { sub: "u-ada", name: "Ada", iat, exp: iat + 7200 }), // exp > 1 h after iat
      jwt(s, { name: "Ada", iat, exp: iat + 600 }), // no sub
      jwt(s, { sub: "u-ada", iat, exp: iat + 600 }), // no name
      jwt(s, { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }, "none"), // alg none
      jwt(B.identitySecret, { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }), // another tenant's secret
    ];
    for (const idt of cases) {
      const res = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: idt, json: { body: "x" } });
      expectProblem(res, 401, "invalid_identity");
    }
  });

  it("body must be 1–10,000 chars → 422 validation_failed with errors[].path", async () => {
    const empty = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "" } });
    expectProblem(empty, 422, "validation_failed");
    expect(empty.body.errors.map((e: any) => e.path).join(" ")).toContain("body");
    expectProblem(
      await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "y".repeat(10_001) } }),
      422,
      "validation_failed",
    );
    const max = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "z".repeat(10_000) } });
    expectStatus(max, 201);
    c3 = max.body;
  });

  it("a reply carries parentId and counts in the parent's replyCount", async () => {
    const res = await api.post("/discussions/d-c/comments", {
      key: A.apiKey,
      identity: bob,
      json: { body: "Reply to Ada", parentId: c1.id },
    });
    expectStatus(res, 201);
    expectComment(res.body);
    expect(res.body.parentId).toBe(c1.id);
    reply = res.body;
    const parent = await api.get(`/comments/${c1.id}`, { key: plainKey });
    expectStatus(parent, 200);
    expect(parent.body.replyCount).toBe(1);
  });

  it("?parentId= lists only that comment's direct replies", async () => {
    const res = await api.get(`/discussions/d-c/comments?parentId=${c1.id}`, { key: plainKey });
    expectCollection(res);
    expect(res.body.items.map((c: any) => c.id)).toEqual([reply.id]);
  });

  it("GET /comments/{id} → the comment", async () => {
    const res = await api.get(`/comments/${c2.id}`, { key: plainKey });
    expectStatus(res, 200);
    expectComment(res.body);
    expect(res.body.id).toBe(c2.id);
    expect(res.body.author.avatarUrl).toBe("https://example.com/cy.png");
  });

  it("list: sort=oldest|newest, limit and cursor walk every comment once", async () => {
    const oldest = await api.get("/discussions/d-c/comments?sort=oldest&limit=100", { key: plainKey });
    expectCollection(oldest);
    const ids = oldest.body.items.map((c: any) => c.id);
    for (const id of [c1.id, c2.id, c3.id, reply.id]) expect(ids).toContain(id);
    for (const c of oldest.body.items) expectComment(c);
    const times = oldest.body.items.map((c: any) => Date.parse(c.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const newest = await api.get("/discussions/d-c/comments?sort=newest&limit=100", { key: plainKey });
    expectCollection(newest);
    expect(newest.body.items.map((c: any) => c.id)).toEqual([...ids].reverse());

    const walked: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const q: string = `/discussions/d-c/comments?sort=oldest&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await api.get(q, { key: plainKey });
      expectCollection(page);
      expect(page.body.items.length).toBeLessThanOrEqual(1);
      walked.push(...page.body.items.map((c: any) => c.id));
      cursor = page.body.nextCursor;
      if (!cursor) break;
    }
    expect(walked).toEqual(ids);
  });

  it("a cursor walk is stable under concurrent inserts (no duplicates, nothing skipped)", async () => {
    expectStatus(await api.put("/discussions/d-page", { key: A.apiKey, json: { title: "Paging" } }), 201);
    const initial: string[] = [];
    for (let i = 0; i < 6; i++) {
      const c = await api.post("/discussions/d-page/comments", { key: A.apiKey, identity: ada, json: { body: `p${i}` } });
      initial.push(c.body.id);
    }
    for (const sort of ["newest", "oldest"]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 30; i++) {
        const q: string = `/discussions/d-page/comments?sort=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await api.get(q, { key: A.apiKey });
        expectCollection(page);
        seen.push(...page.body.items.map((c: any) => c.id));
        // someone posts between two pages
        expectStatus(
          await api.post("/discussions/d-page/comments", { key: A.apiKey, identity: bob, json: { body: `during ${sort} ${i}` } }),
          201,
        );
        cursor = page.body.nextCursor;
        if (!cursor) break;
      }
      expect(new Set(seen).size, `${sort}: no duplicates`).toBe(seen.length);
      for (const id of initial) expect(seen, `${sort}: nothing skipped`).toContain(id);
    }
  });

  it("PATCH by the author → 200 with editedAt; by another reader → 403 not_author; no identity → 401", async () => {
    const res = await api.patch(`/comments/${c2.id}`, {
      key: plainKey,
      identity: identity(A.identitySecret, "u-cy", "Cy"),
      json: { body: "edited body" },
    });
    expectStatus(res, 200);
    expectComment(res.body);
    expect(res.body.body).toBe("edited body");
    expect(res.body.editedAt).toMatch(ISO_MS);
    expectProblem(await api.patch(`/comments/${c2.id}`, { key: plainKey, identity: bob, json: { body: "hijack" } }), 403, "not_author");
    expectProblem(await api.patch(`/comments/${c2.id}`, { key: plainKey, json: { body: "anon" } }), 401, "invalid_identity");
  });

  it("DELETE by another reader → 403 not_author; by the author → 204, soft delete (tombstone with replies)", async () => {
    expectProblem(await api.del(`/comments/${c1.id}`, { key: plainKey, identity: bob }), 403, "not_author");
    const del = await api.del(`/comments/${c1.id}`, { key: plainKey, identity: ada });
    expectStatus(del, 204);
    expect(del.text).toBe("");
    const list = await api.get("/discussions/d-c/comments?sort=oldest&limit=100", { key: plainKey });
    const tomb = list.body.items.find((c: any) => c.id === c1.id);
    expect(tomb, "a deleted comment with replies stays as a tombstone").toBeDefined();
    expect(tomb.status).toBe("deleted");
    expect(tomb.body).toBe("");
    const one = await api.get(`/comments/${c1.id}`, { key: plainKey });
    if (one.status === 200) {
      expect(one.body.status).toBe("deleted");
      expect(one.body.body).toBe("");
    } else expectProblem(one, 404, "not_found");
  });

  it("a moderator key may delete any comment → 204", async () => {
    expectStatus(await api.del(`/comments/${c3.id}`, { key: modKey }), 204);
    const list = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(list.body.items.map((c: any) => c.id)).not.toContain(c3.id); // no replies → not listed
  });

  it("approve / reject / pin / unpin (moderate_content) → 200 with the comment; pinned comes first", async () => {
    const pin = await api.post(`/comments/${reply.id}/pin`, { key: modKey });
    expectStatus(pin, 200);
    expectComment(pin.body);
    expect(pin.body.pinned).toBe(true);
    for (const sort of ["oldest", "newest", "top"]) {
      const list = await api.get(`/discussions/d-c/comments?sort=${sort}`, { key: plainKey });
      expectCollection(list);
      expect(list.body.items[0].id, `sort=${sort}`).toBe(reply.id);
    }
    const unpin = await api.post(`/comments/${reply.id}/unpin`, { key: modKey });
    expectStatus(unpin, 200);
    expect(unpin.body.pinned).toBe(false);

    const reject = await api.post(`/comments/${c2.id}/reject`, { key: modKey });
    expectStatus(reject, 200);
    expectComment(reject.body);
    expect(reject.body.status).toBe("rejected");
    const visible = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(visible.body.items.map((c: any) => c.id)).not.toContain(c2.id);
    const rejected = await api.get("/discussions/d-c/comments?status=rejected", { key: modKey });
    expectCollection(rejected);
    expect(rejected.body.items.map((c: any) => c.id)).toContain(c2.id);
    // a rejected comment is not shown to a key without moderate_content (and no identity)
    const hidden = await api.get(`/comments/${c2.id}`, { key: plainKey });
    expect([403, 404], hidden.text).toContain(hidden.status);

    const approve = await api.post(`/comments/${c2.id}/approve`, { key: modKey });
    expectStatus(approve, 200);
    expect(approve.body.status).toBe("approved");
    const again = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(again.body.items.map((c: any) => c.id)).toContain(c2.id);
  });

  it("moderation routes and ?status=pending without moderate_content → 403 missing_capability with `required`", async () => {
    const list = await api.get("/discussions/d-c/comments?status=pending", { key: plainKey });
    expectProblem(list, 403, "missing_capability");
    expect(res_required(list)).toContain("moderate_content");
    for (const action of ["approve", "reject", "pin", "unpin"]) {
      const r = await api.post(`/comments/${c2.id}/${action}`, { key: plainKey });
      expectProblem(r, 403, "missing_capability");
      expect(res_required(r)).toContain("moderate_content");
    }
  });

  it("publisher routes accept a key with no capabilities", async () => {
    expectStatus(await api.get("/discussions/d-c/comments", { key: plainKey }), 200);
    expectStatus(await api.post("/discussions/d-c/comments", { key: plainKey, identity: bob, json: { body: "publisher" } }), 201);
  });
});

// ───────────────────────────── reactions ─────────────────────────────

describe("reactions", () => {
  let target: any;

  it("toggle → 200 {kind, active, counts}; toggling twice → active false", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "react to me" } });
    expectStatus(c, 201);
    target = c.body;
    const on = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: bob, json: { kind: "like" } });
    expectStatus(on, 200);
    expect(Object.keys(on.body).sort()).toEqual(["active", "counts", "kind"]);
    expect(on.body.kind).toBe("like");
    expect(on.body.active).toBe(true);
    expect(on.body.counts.like).toBe(1);

    const other = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: ada, json: { kind: "like" } });
    expectStatus(other, 200);
    expect(other.body.counts.like).toBe(2);

    const off = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: bob, json: { kind: "like" } });
    expectStatus(off, 200);
    expect(off.body.active).toBe(false);
    expect(off.body.counts.like).toBe(1);

    const got = await api.get(`/comments/${target.id}`, { key: plainKey });
    expect(got.body.reactions.like).toBe(1);
  });

  it("sort=top puts the most-reacted comment first", async () => {
    const res = await api.get("/discussions/d-c/comments?sort=top", { key: plainKey });
    expectCollection(res);
    expect(res.body.items[0].id).toBe(target.id);
  });

  it("unknown kind → 422 validation_failed; no identity → 401 invalid_identity", async () => {
    expectProblem(
      await api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "meh" } }),
      422,
      "validation_failed",
    );
    expectProblem(await api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, json: { kind: "like" } }), 401, "invalid_identity");
  });

  it("concurrent toggles of ten readers count ten", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.post(`/comments/${target.id}/reactions`, {
          key: A.apiKey,
          identity: identity(A.identitySecret, `u-many-${i}`, `R${i}`),
          json: { kind: "wow" },
        }),
      ),
    );
    for (const r of results) expectStatus(r, 200);
    expect((await api.get(`/comments/${target.id}`, { key: A.apiKey })).body.reactions.wow).toBe(10);
  });

  it("one reaction per reader, kind and comment, even under concurrent toggles", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "love" } }),
      ),
    );
    for (const r of results) expectStatus(r, 200);
    const got = await api.get(`/comments/${target.id}`, { key: A.apiKey });
    expect(got.body.reactions.love ?? 0).toBe(0); // 8 toggles = even → inactive
  });
});
