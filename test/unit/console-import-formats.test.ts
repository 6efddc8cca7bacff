// The console's import screen offers every format the API imports, and asks for the site's address
// exactly where the API requires it (contract section 27: switching in from the console).
import { describe, expect, it } from "vitest";
import { IMPORT_FORMAT_CHOICES } from "../../console/src/screens/import-formats.js";
import { IMPORT_FORMATS, NEEDS_SITE } from "../../src/modules/portability/source.js";

describe("the console's import formats", () => {
  it("are the API's, each once", () => {
    expect(IMPORT_FORMAT_CHOICES.map((f) => f.value).sort()).toEqual([...IMPORT_FORMATS].sort());
  });
  it("ask for the site where the API requires it", () => {
    expect(IMPORT_FORMAT_CHOICES.filter((f) => f.needsSite).map((f) => f.value)).toEqual([...NEEDS_SITE]);
  });
});
