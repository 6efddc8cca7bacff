// GET /api/v1/openapi.json (contract section 7): OpenAPI 3.1, generated from the route table,
// valid by an independent validator, naming every route; and the checker every test's REST answers
// go through (test/support/openapi-check.ts) really refuses what the document does not describe.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { checkResponse } from "./support/openapi-check.js";
import { restRoutes } from "../src/modules/route-table.js";

let server: TestServer;
let t: TestTenant;
let doc: any;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  const res = await fetch(`${server.url}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = await res.json();
});
afterAll(() => server?.stop());

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("names the server absolutely in servers: PUBLIC_URL when set, else the address it listens on (never the caller's Host)", async () => {
    expect(doc.servers).toEqual([{ url: server.url }]);
    // another name the caller used for it is not written back (contract section 31)
    const viaLocalhost = server.url.replace("127.0.0.1", "localhost");
    expect(((await (await fetch(`${viaLocalhost}/api/v1/openapi.json`)).json()) as any).servers).toEqual([{ url: server.url }]);
    const behindProxy = await startServer({ PUBLIC_URL: "https://comments.example/engagement/" });
    try {
      const proxied = (await (await fetch(`${behindProxy.url}/api/v1/openapi.json`)).json()) as any;
      expect(proxied.servers).toEqual([{ url: "https://comments.example/engagement" }]);
      expect(proxied.paths).toEqual(doc.paths);
    } finally {
      await behindProxy.stop();
    }
  });

  it("documents every REST route with its parameters, body, answers and problem documents", () => {
    for (const r of restRoutes) {
      const path = `/api/v1${r.path.replace(/:(\w+)/g, "{$1}")}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${path}`).toBeDefined();
      expect(op.responses["401"].content["application/problem+json"]).toBeDefined();
    }
    expect(doc.paths["/api/v1/stream/{discussionId}"].get).toBeDefined();
    const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((o: any) => o.operationId));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(doc.paths["/api/v1/admin/keys/{id}"].delete.operationId).toBe("adminRevokeApiKey");
    expect(doc.paths["/api/v1/keys/{id}"].delete.operationId).toBe("revokeApiKey");
    const list = doc.paths["/api/v1/discussions/{id}/comments"].get;
    expect(list.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual([
      "header:X-Service-Consistency",
      "path:id",
      "query:sort",
      "query:parentId",
      "query:topLevel",
      "query:status",
      "query:limit",
      "query:cursor",
    ]);
    expect(list.parameters[2].schema.enum).toEqual(["best", "newest", "oldest", "score", "top"]);
    const post = doc.paths["/api/v1/discussions/{id}/comments"].post;
    expect(post.requestBody.content["application/json"].schema.properties).toHaveProperty("body");
    const comment = post.responses["201"].content["application/json"].schema;
    expect(comment.required).toEqual(expect.arrayContaining(["id", "discussionId", "author", "body", "status", "reactions", "replyCount"]));
    expect(comment.properties.reactions).toMatchObject({ type: "object", additionalProperties: { type: "integer", minimum: 1 } });
    expect(doc.paths["/api/v1/keys/{id}"].delete.responses["204"]).toBeDefined();
    const counts = doc.paths["/api/v1/discussions/counts"].get;
    expect(counts.responses["200"].content["application/json"].schema).toMatchObject({
      properties: { counts: { additionalProperties: { type: "integer" } } },
    });
    expect(counts.responses["304"]).toBeDefined();
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(["apiKey", "adminJwt"]));
  });

  it("describes every parameter: each path, query and header parameter of every operation says what it means", () => {
    const bare = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.entries(ops).flatMap(([method, op]: [string, any]) =>
        (op.parameters ?? [])
          .filter((p: any) => typeof p.description !== "string" || p.description.trim().length < 8)
          .map((p: any) => `${method.toUpperCase()} ${path} ${p.in}:${p.name}`),
      ),
    );
    expect(bare).toEqual([]);
    const search = doc.paths["/api/v1/comments/search"].get.parameters;
    expect(search.find((p: any) => p.name === "q").description).toMatch(/words/);
    expect(search.find((p: any) => p.name === "limit").description).toMatch(/1–100/);
  });

  it("matches real answers (the shared client checks every one) and its checker refuses what it does not describe", async () => {
    const r = await t.api.put("/api/v1/discussions/oa-1", { title: "OpenAPI" });
    expect(r.status).toBe(201);
    const good = r.body;
    expect(() => checkResponse("PUT", `${server.url}/api/v1/discussions/oa-1`, 201, "application/json", good)).not.toThrow();
    expect(() =>
      checkResponse("PUT", `${server.url}/api/v1/discussions/oa-1`, 201, "application/json", { ...good, state: "closed" }),
    ).toThrow(/does not match/);
    expect(() => checkResponse("PUT", `${server.url}/api/v1/discussions/oa-1`, 201, "application/json", { id: "x" })).toThrow(
      /does not match/,
    );
    expect(() => checkResponse("PUT", `${server.url}/api/v1/discussions/oa-1`, 418, "application/json", good)).toThrow(/does not list/);
    expect(() =>
      checkResponse("GET", `${server.url}/api/v1/discussions/oa-1`, 404, "application/problem+json", { code: "not_found" }),
    ).toThrow(/does not match/);
  });
});

describe("clients generated from it (openapi-typescript)", () => {
  it("type X-Service-Identity as a header of the reader actions (required where it is) and Idempotency-Key on writes", async () => {
    const { default: openapiTS, astToString } = await import("openapi-typescript");
    const ts = await import("typescript");
    const generated = astToString(await openapiTS(doc));
    const dir = mkdtempSync(join(tmpdir(), "openapi-ts-"));
    try {
      writeFileSync(join(dir, "api.ts"), generated);
      // a client's code: compiles only if the generated types say what the document means
      writeFileSync(
        join(dir, "use.ts"),
        `import type { operations } from "./api";
type Post = operations["postComment"]["parameters"]["header"];
type Del = operations["deleteComment"]["parameters"]["header"];
const post: Post = { "X-Service-Identity": "eyJ…", "Idempotency-Key": "k-1" };
// @ts-expect-error posting is the reader's: the assertion is required
const anonymous: Post = {};
const moderatorDelete: Del = {};
const authorDelete: Del = { "X-Service-Identity": "eyJ…" };
export { post, anonymous, moderatorDelete, authorDelete };
`,
      );
      // the two files alone, on the language's own library: not the DOM's, nor every @types package of
      // the checkout (about 3 s of CPU for 100 files these two do not use)
      const program = ts.createProgram([join(dir, "use.ts")], {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        lib: ["lib.es2022.d.ts"],
        types: [],
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const post = doc.paths["/api/v1/discussions/{id}/comments"].post;
    expect(post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "X-Service-Identity", in: "header", required: true })]),
    );
    expect(doc.paths["/api/v1/discussions/{id}/comments"].get.parameters.map((p: { name: string }) => p.name)).not.toContain(
      "Idempotency-Key",
    );
  });
});
