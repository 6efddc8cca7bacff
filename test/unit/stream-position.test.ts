// streamPosition (src/stream-engine/session.ts): the id of the `connected` frame, the seq a stream continues
// after (contract section 4, "Stream"), so that ids on a stream never go backwards.
import { describe, expect, it } from "vitest";
import { streamPosition } from "../../src/stream-engine/session.js";

const seqs = (...s: number[]) => s.map((seq) => ({ seq }));

describe("streamPosition", () => {
  it("without Last-Event-ID: the head (live only)", () => {
    expect(streamPosition(null, 7, [], false)).toBe(7);
    expect(streamPosition(null, 0, [], false)).toBe(0);
  });

  it("with one: the given id, whatever the replay holds", () => {
    expect(streamPosition(2, 7, seqs(3, 4, 5, 6, 7), false)).toBe(2);
    expect(streamPosition(7, 7, [], false)).toBe(7);
    expect(streamPosition(0, 3, seqs(1, 2, 3), false)).toBe(0);
  });

  it("past the head: the head, so the next live id is above it", () => {
    expect(streamPosition(999, 7, [], false)).toBe(7);
  });

  it("truncated: the seq just before the oldest kept event, or the head when none is kept", () => {
    expect(streamPosition(1, 6, seqs(4, 5, 6), true)).toBe(3);
    expect(streamPosition(0, 6, [], true)).toBe(6);
  });
});
