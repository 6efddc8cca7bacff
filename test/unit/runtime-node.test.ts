// The runtime is Node 24, the current LTS (docs/operations.md, "Which Node"): the `node` dependency puts
// its binary first on every npm script's PATH, so `npm test`, `npm start` and the CLI run on it
// whatever the machine's own Node is.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the runtime", () => {
  it("is Node 24 for the tests and for what they start by name", () => {
    expect(process.versions.node.split(".")[0]).toBe("24");
    expect(execFileSync("node", ["-p", "process.versions.node"], { encoding: "utf8" }).trim().split(".")[0]).toBe("24");
  });
});
