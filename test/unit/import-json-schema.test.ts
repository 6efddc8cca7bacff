// docs/import.schema.json is the generic JSON import format's schema as src/modules/portability/
// json-format.ts declares it (z.toJSONSchema): the file the docs link to cannot drift from what
// the importer accepts.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { GenericImportFile } from "../../src/modules/portability/json-format.js";

describe("docs/import.schema.json", () => {
  it("is the generic format's schema", () => {
    const file = JSON.parse(readFileSync(new URL("../../docs/import.schema.json", import.meta.url), "utf8"));
    expect(file).toEqual(z.toJSONSchema(GenericImportFile, { io: "input" }));
  });
});
