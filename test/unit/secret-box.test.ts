// The secret box: sealed values round-trip (opened ones are remembered), are bound to their key and
// refuse tampering every time, as a 503 secret_key_mismatch reported once per value.
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
    expect(() => box.open("v2.x.y.z")).toThrow(expect.objectContaining({ code: "secret_key_mismatch", status: 503 }));
    expect(box.open(sealed)).toBe("s3cret");
  });

  it("reports an unreadable value once (for the log), refuses it every time, and `opens` tells without reporting", () => {
    let reports = 0;
    const box = createSecretBox("key material one", { onUnreadable: () => reports++ });
    const foreign = createSecretBox("key material two").seal("s3cret");
    expect(box.opens(foreign)).toBe(false);
    expect(reports).toBe(0);
    for (let i = 0; i < 3; i++) expect(() => box.open(foreign)).toThrow(expect.objectContaining({ code: "secret_key_mismatch" }));
    expect(reports).toBe(1);
    expect(() => box.open(createSecretBox("key material three").seal("x"))).toThrow();
    expect(reports).toBe(2);
    expect(box.opens(box.seal("mine"))).toBe(true);
  });
});
