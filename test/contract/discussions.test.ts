// Black-box contract suite, discussions: create and update, list and paginate, ids, lock / unlock /
// archive.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { describe, expect, it } from "vitest";
import { api, contractRun, expectCollection, expectProblem, expectStatus, openStream } from "../support/contract-client.js";

const { A, ada, bob, modKey, plainKey } = await contractRun();

// ───────────────────────────── discussions ─────────────────────────────

describe("discussions", () => {
  it("PUT /discussions/{id} → 201 on create, 200 on update", async () => {
    const created = await api.put("/discussions/d-main", {
      key: A.apiKey,
      json: { title: "Launch day", url: "https://example.com/launch" },
    });
    expectStatus(created, 201);
    expect(created.body.id).toBe("d-main");
    expect(created.body.state).toBe("open");
    const updated = await api.put("/discussions/d-main", {
      key: A.apiKey,
      json: { title: "Launch day!", url: "https://example.com/launch" },
    });
    expectStatus(updated, 200);
    expect(updated.body.title).toBe("Launch day!");
  });

  it("GET /discussions/{id} → counts and state", async () => {
    const res = await api.get("/discussions/d-main", { key: plainKey });
    expectStatus(res, 200);
    expect(res.body.id).toBe("d-main");
    expect(res.body.state).toBe("open");
    // "counts": the contract names no field; the README documents commentCount / counts.comments
    expect(JSON.stringify(res.body)).toMatch(/count/i);
  });

  it("GET /discussions → {items, nextCursor}, paginated with limit/cursor", async () => {
    expectStatus(await api.put("/discussions/d-second", { key: A.apiKey, json: { title: "Second" } }), 201);
    const all = await api.get("/discussions", { key: A.apiKey });
    expectCollection(all);
    expect(all.body.items.map((d: any) => d.id)).toEqual(expect.arrayContaining(["d-main", "d-second"]));
    const p1 = await api.get("/discussions?limit=1", { key: A.apiKey });
    expectCollection(p1);
    expect(p1.body.items).toHaveLength(1);
    expect(typeof p1.body.nextCursor).toBe("string");
    const p2 = await api.get(`/discussions?limit=1&cursor=${encodeURIComponent(p1.body.nextCursor)}`, { key: A.apiKey });
    expectCollection(p2);
    expect(p2.body.items).toHaveLength(1);
    expect(p2.body.items[0].id).not.toBe(p1.body.items[0].id);
  });

  it("bad path / query parameters → 400 invalid_parameter", async () => {
    expectProblem(await api.get(`/discussions/${encodeURIComponent("bad id!")}`, { key: A.apiKey }), 400, "invalid_parameter");
    expectProblem(await api.get("/discussions?limit=0", { key: A.apiKey }), 400, "invalid_parameter");
    expectProblem(await api.get("/discussions?limit=101", { key: A.apiKey }), 400, "invalid_parameter");
  });

  it("discussion ids up to 128 chars of [A-Za-z0-9._:-] are accepted (PUT, GET, comments, stream)", async () => {
    const long = `L.${"a".repeat(120)}:_-0Z9`; // 128 chars
    expect(long).toHaveLength(128);
    const ok = await api.put(`/discussions/${long}`, { key: A.apiKey, json: { title: "long id" } });
    expectStatus(ok, 201);
    expect(ok.body.id).toBe(long);
    expectStatus(await api.get(`/discussions/${long}`, { key: A.apiKey }), 200);
    const mid = "m".repeat(101);
    expectStatus(await api.post(`/discussions/${mid}/comments`, { key: A.apiKey, identity: ada, json: { body: "101-char id" } }), 201);
    const s = await openStream(`/stream/${mid}`, { "x-api-key": A.apiKey });
    s.close();
    expect(s.res.status).toBe(200);
  });

  it("a 129-char discussion id → 400 invalid_parameter (problem document)", async () => {
    expectProblem(await api.put(`/discussions/${"x".repeat(129)}`, { key: A.apiKey, json: { title: "t" } }), 400, "invalid_parameter");
  });

  it("any over-long path id is still answered with a problem document (404 or 400)", async () => {
    for (const path of [`/comments/${"c".repeat(300)}`, `/webhooks/${"w".repeat(150)}`]) {
      const res = await api.get(path, { key: A.apiKey });
      expect([400, 404], `${path}: ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(["not_found", "invalid_parameter"]).toContain(res.body.code);
    }
  });

  it("PUT with a non-string title → 422 validation_failed", async () => {
    expectProblem(await api.put("/discussions/d-main", { key: A.apiKey, json: { title: 42 } }), 422, "validation_failed");
  });

  it("lock → 200 with the discussion; locked refuses comments, edits, reactions with 409 discussion_locked; unlock reopens", async () => {
    expectStatus(await api.put("/discussions/d-lock", { key: A.apiKey, json: { title: "Lockable" } }), 201);
    const c0 = await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "before the lock" } });
    expectStatus(c0, 201);

    const locked = await api.post("/discussions/d-lock/lock", { key: modKey });
    expectStatus(locked, 200);
    expect(locked.body.id).toBe("d-lock");
    expect(locked.body.state).toBe("locked");
    expect((await api.get("/discussions/d-lock", { key: A.apiKey })).body.state).toBe("locked");

    expectProblem(
      await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "x" } }),
      409,
      "discussion_locked",
    );
    expectProblem(
      await api.patch(`/comments/${c0.body.id}`, { key: A.apiKey, identity: ada, json: { body: "edited" } }),
      409,
      "discussion_locked",
    );
    expectProblem(
      await api.post(`/comments/${c0.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "like" } }),
      409,
      "discussion_locked",
    );

    const unlocked = await api.post("/discussions/d-lock/unlock", { key: modKey });
    expectStatus(unlocked, 200);
    expect(unlocked.body.state).toBe("open");
    expectStatus(await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "after" } }), 201);
  });

  it("archive → 200; archived refuses comments (409 discussion_archived) for good", async () => {
    const archived = await api.post("/discussions/d-lock/archive", { key: modKey });
    expectStatus(archived, 200);
    expect(archived.body.state).toBe("archived");
    expectProblem(
      await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "x" } }),
      409,
      "discussion_archived",
    );
    const reopen = await api.post("/discussions/d-lock/unlock", { key: modKey });
    expectProblem(reopen, 409, "discussion_archived");
    expect((await api.get("/discussions/d-lock", { key: A.apiKey })).body.state).toBe("archived");
  });

  it("lock without moderate_content → 403 missing_capability", async () => {
    const res = await api.post("/discussions/d-main/lock", { key: plainKey });
    expectProblem(res, 403, "missing_capability");
    expect(JSON.stringify(res.body.required)).toContain("moderate_content");
  });
});
