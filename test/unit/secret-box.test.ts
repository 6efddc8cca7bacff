// The secret box: sealed values round-trip (opened ones are remembered), are bound to their key and
// refuse tampering every time.
import { describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/lib/secret-box.js";

describe("createSecretBox", () => {
  it("round-trips, with a fresh IV per seal", () => {
    const box = createSecretBox("key material one");
    const a = box.seal("whsec_abc");
    const b = box.seal("whsec_abc");
    expect(a).not.toBe(b);
    expect(box.open(a)).toBe("whsec_abc");
    expect(box.open(b)).toBe("whsec_abc");
  });

  it("refuses another key's value and a tampered one, every time (failures are not remembered)", () => {
    const box = createSecretBox("key material one");
    const other = createSecretBox("key material two");
    const sealed = box.seal("s3cret");
    expect(() => other.open(sealed)).toThrow();
    const [v, iv, ct, tag] = sealed.split(".");
    const c0 = ct!.charAt(0);
    const flipped = `${v}.${iv}.${c0 === "A" ? "B" : "A"}${ct!.slice(1)}.${tag}`;
    expect(() => box.open(flipped)).toThrow();
    expect(() => box.open(flipped)).toThrow();
    expect(() => box.open("v2.x.y.z")).toThrow("Unrecognised sealed secret");
    expect(box.open(sealed)).toBe("s3cret");
  });
});
