// REST variable checks: structured paths from walking the input types, never from error messages.
import { describe, expect, it } from "vitest";
import { buildSchema, parse } from "graphql";
import { variableProblems } from "../../src/http/rest/coerce.js";

const schema = buildSchema(`
  input Delivery { maxAttempts: Int, backoffBaseMs: Int }
  input Create { url: String!, events: [String!]!, delivery: Delivery, note: String }
  type Query { x: Int }
  type Mutation { create(input: Create!, limit: Int, ids: [String!]): Int }
`);
const doc = parse(`mutation ($input: Create!, $limit: Int, $ids: [String!]) { create(input: $input, limit: $limit, ids: $ids) }`);
const problems = (vars: Record<string, unknown>) =>
  variableProblems(schema, doc, vars).map((p) => [p.variable, p.field.path, p.field.message]);

describe("variableProblems", () => {
  it("accepts good variables", () => {
    expect(problems({ input: { url: "u", events: ["a"], delivery: { maxAttempts: 3 } }, limit: 5, ids: ["a"] })).toEqual([]);
  });

  it("names missing, unknown and mistyped fields with paths relative to the body", () => {
    const got = problems({ input: { events: ["a", 7], delivery: { maxAttempts: "x", retries: 1 }, colour: "red" } });
    expect(
      got.map(([, path, message]) => [path, message === "is required" || message === "is not a known field" ? message : "type"]),
    ).toEqual(
      expect.arrayContaining([
        ["colour", "is not a known field"],
        ["url", "is required"],
        ["events[1]", "type"],
        ["delivery.maxAttempts", "type"],
        ["delivery.retries", "is not a known field"],
      ]),
    );
    expect(got).toHaveLength(5);
  });

  it("names other variables by their own name, and a missing body as `body`", () => {
    expect(problems({ limit: "ten", ids: ["a", null] }).map(([v, path]) => [v, path])).toEqual([
      ["input", "body"],
      ["limit", "limit"],
      ["ids", "ids[1]"],
    ]);
    expect(problems({ input: "nope" })).toEqual([["input", "body", "must be an object"]]);
  });
});
