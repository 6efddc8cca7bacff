// The walkthrough (docs/walkthrough.md) runs as written: every ```sh walkthrough block, in order, in
// one bash (set -euo pipefail), against a fresh server process started as `npm start` starts it, with
// the CLI, curl and the page's own variables. So the documentation cannot drift from the service.
// The README stays a short entry that links every page of docs/ and bench/README.md.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "./support/own-services.js";
import { TEST_ADMIN_SECRET } from "./support/server.js";

/** The walkthrough's blocks, in order. */
export function walkthroughBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh walkthrough\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

const WALKTHROUGH = "docs/walkthrough.md";
/** Every page of the documentation: the README, docs/ and the benchmarks' page. */
const PAGES = [
  "README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
  "bench/README.md",
];

const tmp = mkdtempSync(join(tmpdir(), "readme-"));
let server: ReturnType<typeof spawn> | undefined;
let port = 0;
let env: NodeJS.ProcessEnv;
let serverLog = "";

beforeAll(async () => {
  port = await freePort();
  env = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
    ALLOW_HTTP_WEBHOOKS: "1",
    RUN_WEBHOOK_WORKER: "1",
    LOG_LEVEL: "info",
    TMPDIR: tmp,
  };
  server = spawn(process.execPath, ["dist/main.js"], { env, stdio: ["ignore", "pipe", "pipe"] });
  server.stdout!.on("data", (d: Buffer) => (serverLog += d.toString()));
  // a loaded machine (CI runs the projects' files in parallel) may take a while to start a child server
  const until = Date.now() + 90_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until) throw new Error("the server did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((r) => server!.once("exit", r));
  }
  rmSync(tmp, { recursive: true, force: true });
});

describe("README", () => {
  const readme = readFileSync("README.md", "utf8");

  it("is short enough to read in ten minutes", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
  });

  it("links every page of docs/ and the benchmarks' page", () => {
    for (const page of PAGES.filter((p) => p !== "README.md")) expect(readme, page).toContain(`](${page})`);
  });

  it("names the test commands CI runs", () => {
    for (const command of ["npm test", "npm run test:browser", "npm run test:contract", "npm run test:engines"]) {
      expect(readme, command).toContain(command);
    }
  });
});

describe("walkthrough", () => {
  it("starts with a log line that says where to go next", () => {
    expect(serverLog).toContain(`console http://127.0.0.1:${port}/console/, OpenAPI http://127.0.0.1:${port}/api/v1/openapi.json`);
  });

  it("finds the walkthrough blocks", () => {
    const blocks = walkthroughBlocks(readFileSync(WALKTHROUGH, "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    // the walkthrough lives on one page: no other page has blocks the test would not run
    for (const page of PAGES.filter((p) => p !== WALKTHROUGH)) expect(walkthroughBlocks(readFileSync(page, "utf8")), page).toEqual([]);
    // one set of names: what a block uses, an earlier block (or the environment) defined
    const script = blocks.join("\n");
    for (const name of ["BASE", "KEY", "ADMIN", "TENANT", "IDENTITY", "IDENTITY_SECRET", "WEBHOOK_ID"]) {
      expect(script, name).toMatch(new RegExp(`^${name}=`, "m"));
    }
    expect(script).not.toMatch(/\$ADMIN_JWT\b/);
    // the webhook receiver: on loopback only, listening before the endpoint is created, and how to stop it
    expect(script).toMatch(/\.listen\(process\.argv\[1\],"127\.0\.0\.1"/);
    expect(script).toMatch(/^RECEIVER_PID=\$!.*kill \$RECEIVER_PID/m);
    const listening = script.indexOf("until grep -q listening");
    expect(listening).toBeGreaterThan(0);
    expect(listening).toBeLessThan(script.indexOf("-X POST $BASE/webhooks "));
  });

  it("ends every JSON answer of the documentation's curl examples with a newline", () => {
    const curls = PAGES.flatMap((page) => readFileSync(page, "utf8").split("\n")).filter(
      (l) => /(^|\s|\$\()curl -/.test(l) && !l.includes(" -sN "),
    );
    expect(curls.length).toBeGreaterThan(20);
    for (const l of curls) expect(l, l).toContain("-w '\\n'");
  });

  it("runs every block in order against a fresh server", async () => {
    const blocks = walkthroughBlocks(readFileSync(WALKTHROUGH, "utf8"));
    const receiverPort = await freePort();
    // the discussion the embed examples show is left open by the walkthrough
    const embedded = /discussion-id="([^"]+)"/.exec(readFileSync("docs/embed.md", "utf8"))![1]!;
    const after = `echo "EMBEDDED_STATE=$(curl -fsS $BASE/discussions/${embedded} -H "X-API-Key: $KEY" | json .state)"`;
    const script = `set -euo pipefail\n${blocks.join("\n")}\n${after}\n`;
    const bash = spawn("bash", ["-c", script], {
      cwd: process.cwd(),
      env: { ...env, RECEIVER_PORT: String(receiverPort) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: the receiver it starts in the background ends with it
    });
    let out = "";
    bash.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    bash.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(-1), 150_000);
      // "exit", not "close": the receiver the script leaves running keeps its stderr open
      bash.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    try {
      process.kill(-bash.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
    expect(code, out.slice(-4000)).toBe(0);
    // what the walkthrough says the reader will see
    expect(out).toContain('"kind":"like","active":true');
    expect(out).toContain('{"value":1,"score":1,"upvotes":1,"downvotes":0}');
    expect(out).toMatch(/"score":1,"upvotes":1,"downvotes":0,"kind":"comment","myVote":1\}\],"nextCursor":null/);
    expect(out).toContain('"bodyHtml":"<p><strong>Launch</strong> day, see <a href=\\"https://example.com\\"');
    expect(out).toMatch(/^<p><em>Welcome<\/em> back<\/p>$/m);
    expect(out).toMatch(/^the page begins with the reply's thread: cmt_/m);
    expect(out).toContain('"verified":true');
    expect(out).toMatch(/^Idempotent-Replayed: true/im);
    expect(out).toMatch(/^comment_created t=\d+,v1=[0-9a-f]{64},kid=[0-9a-f]{8}$/m);
    expect(out).toMatch(/https?:\/\/[^\s]+\/console\/[^\s]*/); // the console link
    expect(out).toContain('"key":"pk_');
    expect(out).toMatch(/^EMBEDDED_STATE=open$/m);
    // one answer per line: none runs into the next
    expect(out).not.toMatch(/[}\]](\{|\[|HTTP\/)/);
    // the receiver listened before the endpoint was created: creation's own handshake reached it
    expect(out.match(/^verification t=/gm)?.length).toBe(2);
  }, 180_000);
});
