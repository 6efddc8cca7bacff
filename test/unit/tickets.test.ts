// Stream tickets name their tenant (src/stream-engine/ticket-redemption.ts): the instance joins the right channel
// before the redemption, which confirms the guess.
import { describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.js";
import { generateTicket, ticketTenant } from "../../src/stream-engine/ticket-redemption.js";

describe("stream tickets", () => {
  it("are st_ and 64 hex digits that name the tenant, with 160 random bits", () => {
    for (let i = 0; i < 200; i++) {
      const tenantId = newId("ten");
      const a = generateTicket(tenantId);
      const b = generateTicket(tenantId);
      expect(a).toMatch(/^st_[0-9a-f]{64}$/);
      expect(ticketTenant(a)).toBe(tenantId);
      expect(a.slice(0, 27)).toBe(b.slice(0, 27));
      expect(a.slice(27)).not.toBe(b.slice(27));
    }
  });

  it("of a tenant id of another shape are all random, and name no tenant that exists", () => {
    const t = generateTicket("tenant-with-a-chosen-id");
    expect(t).toMatch(/^st_[0-9a-f]{64}$/);
    expect(ticketTenant(t)).toMatch(/^ten_[A-Za-z0-9_-]{16}$/);
    expect(ticketTenant(t)).not.toBe("tenant-with-a-chosen-id");
  });

  it("of any other shape name no tenant", () => {
    for (const raw of ["", "st_", `st_${"0".repeat(63)}`, `st_${"g".repeat(64)}`, `xx_${"0".repeat(64)}`, `st_${"0".repeat(65)}`]) {
      expect(ticketTenant(raw)).toBeNull();
    }
  });
});
