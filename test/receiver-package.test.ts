// A receiver in plain Node (no TypeScript tooling, no Prisma) imports verifyWebhook from the
// package's `./webhooks` subpath, which points at built JavaScript (npm install builds it).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

const SCRIPT = `
import { createHmac } from "node:crypto";
import { verifyWebhook } from "engagement-service/webhooks";
const secret = "whsec_plain-node-receiver-secret";
const body = JSON.stringify({ id: "evt", type: "comment_created" });
const now = new Date();
const iso = now.toISOString();
const v1 = createHmac("sha256", secret).update(iso + "." + body).digest("hex");
const headers = { "x-service-timestamp": iso, "x-service-signature": "t=" + Math.floor(now.getTime() / 1000) + ",v1=" + v1 + ",kid=k1" };
const good = verifyWebhook(headers, body, [{ kid: "k1", secret }]);
const tampered = verifyWebhook(headers, body.replace("comment_created", "comment_deleted"), [{ kid: "k1", secret }]);
console.log(JSON.stringify({ good, tampered, prisma: Object.keys(globalThis).some((k) => /prisma/i.test(k)) }));
`;

describe("engagement-service/webhooks from plain Node", () => {
  it("verifies a signature computed with node:crypto and refuses a tampered body, without tsx or Prisma", () => {
    if (!existsSync("dist/receiver/index.js")) execFileSync("npm", ["run", "-s", "build:receiver"], { stdio: "ignore" });
    // plain `node`: no --import tsx, no loader; resolution by package name through "exports"
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "" },
    });
    const r = JSON.parse(out.trim().split("\n").pop()!);
    expect(r.good).toEqual({ ok: true, kid: "k1" });
    expect(r.tampered).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(r.prisma).toBe(false);
  });

  it("the built entry imports nothing but node:crypto", () => {
    if (!existsSync("dist/receiver/index.js")) execFileSync("npm", ["run", "-s", "build:receiver"], { stdio: "ignore" });
    const out = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", `await import("engagement-service/webhooks"); console.log("ok")`],
      { encoding: "utf8" },
    );
    expect(out.trim()).toBe("ok");
    const deps = execFileSync("grep", ["-rhoE", 'from "[^"]+"', "dist/receiver"], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(new Set(deps)).toEqual(new Set(['from "./outbound/signature.js"', 'from "node:crypto"']));
  });
});
