// The references check refuses a Markdown link, or a relative path named in the text, that leaves the
// repository (scripts/outside-links.ts, run by `npm run references:check`).
import { describe, expect, it } from "vitest";
import { linksLeavingRepo } from "../../scripts/outside-links.js";

const has = (path: string) => ["README.md", "docs/api.md", "docs/choices.md", "src/app.ts"].includes(path);

describe("links leaving the repository", () => {
  it("finds a link or a named path that resolves outside the root, from the file's folder", () => {
    const text = [
      "The contract is `../shared/contract/API.md`.",
      "See [the contract](../shared/contract/API.md#4-resources) and [up](../../x.md).",
      "[ref]: ../outside.md",
    ].join("\n");
    expect(linksLeavingRepo("README.md", text, has)).toEqual([
      { line: 1, target: "../shared/contract/API.md" },
      { line: 2, target: "../shared/contract/API.md#4-resources" },
      { line: 2, target: "../../x.md" },
      { line: 3, target: "../outside.md" },
    ]);
    expect(linksLeavingRepo("docs/api.md", "[x](../../elsewhere.md) and [y](%2E%2E/%2E%2E/z.md)", has)).toEqual([
      { line: 1, target: "../../elsewhere.md" },
      { line: 1, target: "%2E%2E/%2E%2E/z.md" },
    ]);
  });

  it("finds a path named in a page's text that goes up to nothing the repository has", () => {
    expect(linksLeavingRepo("docs/api.md", "The contract (`../shared/contract/API.md`) says…", has)).toEqual([
      { line: 1, target: "../shared/contract/API.md" },
    ]);
  });

  it("lets links inside the repository, URLs, anchors and site paths be", () => {
    const text = [
      "[choices](choices.md), [readme](../README.md), [code](../src/app.ts), `../README.md`",
      "[web](https://example.com/../x), [mail](mailto:a@b.c), [here](#errors), `/api/v1/openapi.json`, [doc](/api/v1/openapi.json)",
    ].join("\n");
    expect(linksLeavingRepo("docs/api.md", text, has)).toEqual([]);
  });
});
