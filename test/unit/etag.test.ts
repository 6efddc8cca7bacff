// If-None-Match compares ETags weakly (RFC 9110, section 13.1.2): src/http/etag.ts, the one check of
// every route that answers 304.
import { describe, expect, it } from "vitest";
import { notModified } from "../../src/http/etag.js";

describe("If-None-Match", () => {
  it("matches the ETag strong or weak, in a list, or *", () => {
    expect(notModified('"abc"', '"abc"')).toBe(true);
    expect(notModified('W/"abc"', '"abc"')).toBe(true);
    expect(notModified('"x", W/"abc"', '"abc"')).toBe(true);
    expect(notModified(['"x"', 'W/"abc"'], '"abc"')).toBe(true);
    expect(notModified("*", '"abc"')).toBe(true);
  });

  it("does not match another tag, an unquoted one, or no header", () => {
    expect(notModified(undefined, '"abc"')).toBe(false);
    expect(notModified("", '"abc"')).toBe(false);
    expect(notModified('"abcd"', '"abc"')).toBe(false);
    expect(notModified("abc", '"abc"')).toBe(false);
    expect(notModified('"a,b"', '"a"')).toBe(false);
  });
});
