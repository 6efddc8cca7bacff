// Validation problems in words (src/lib/errors.ts fieldErrorsFromZod): zod's default bound and type
// messages become "must be at least 1", "must be at most 10000", "must be a number"; a rule's own
// message is kept as it is.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorsFromZod } from "../../src/lib/errors.js";

const problems = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  if (r.success) throw new Error("expected problems");
  return fieldErrorsFromZod(r.error.issues);
};

describe("fieldErrorsFromZod", () => {
  it("says zod's default bounds and types in words, and keeps a rule's own message", () => {
    const schema = z.object({
      maxBodyLength: z.number().int().min(1).max(10_000),
      ratio: z.number().gt(0).lt(1),
      name: z.string().min(2).max(5),
      tags: z.array(z.string()).max(2),
      word: z.string().min(1, "must not be empty"),
      count: z.number(),
    });
    expect(problems(schema, { maxBodyLength: 0, ratio: 0, name: "a", tags: ["a", "b", "c"], word: "", count: "3" })).toEqual([
      { path: "maxBodyLength", message: "must be at least 1" },
      { path: "ratio", message: "must be more than 0" },
      { path: "name", message: "must be at least 2 characters" },
      { path: "tags", message: "must be at most 2 items" },
      { path: "word", message: "must not be empty" },
      { path: "count", message: "must be a number" },
    ]);
    expect(problems(schema.shape.maxBodyLength, 20_000)).toEqual([{ path: "body", message: "must be at most 10000" }]);
    expect(problems(schema.shape.ratio, 1)).toEqual([{ path: "body", message: "must be less than 1" }]);
  });
});
