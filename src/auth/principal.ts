import type { Capability } from "./capabilities.js";
import { CAPABILITIES } from "./capabilities.js";

/** Who is calling: the admin console (JWT), a tenant backend (API key) or a browser (publishable key). */
export type Principal =
  | { kind: "admin"; tenantId: string; subject: string; capabilities: ReadonlySet<Capability> }
  | { kind: "key"; tenantId: string; keyId: string; capabilities: ReadonlySet<Capability> }
  /** a browser's `pk_` key: reads, reader actions with an identity assertion, stream tickets; no capability */
  | { kind: "publishable"; tenantId: string; keyId: string; capabilities: ReadonlySet<Capability> };

export const ALL_CAPABILITIES: ReadonlySet<Capability> = new Set(CAPABILITIES);

export function hasCapability(p: Principal | null, cap: Capability): boolean {
  return !!p && p.capabilities.has(cap);
}
