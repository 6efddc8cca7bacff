import type { Capability } from "./capabilities.js";
import { CAPABILITIES } from "./capabilities.js";

/** Who is calling: the admin console (JWT), a tenant backend (API key) or a browser (publishable key). */
export type Principal =
  | { kind: "admin"; tenantId: string; subject: string; capabilities: ReadonlySet<Capability> }
  | { kind: "key"; tenantId: string; keyId: string; capabilities: ReadonlySet<Capability> }
  /** a person signed in to the admin console (contract section 10): owner or moderator */
  | {
      kind: "operator";
      tenantId: string;
      operatorId: string;
      email: string;
      role: "owner" | "moderator";
      capabilities: ReadonlySet<Capability>;
    }
  /** a browser's `pk_` key: reads, reader actions with an identity assertion, stream tickets; no capability */
  | { kind: "publishable"; tenantId: string; keyId: string; capabilities: ReadonlySet<Capability> }
  /**
   * a chat alert's Approve or Reject link (src/modules/alerts/): one moderation of one comment, never
   * a request's caller; `alertJobId` is the job whose message carried it, `label` its chat ("Slack alert")
   */
  | { kind: "alert_link"; tenantId: string; alertJobId: string; label: string; capabilities: ReadonlySet<Capability> };

export const ALL_CAPABILITIES: ReadonlySet<Capability> = new Set(CAPABILITIES);

export function hasCapability(p: Principal | null, cap: Capability): boolean {
  return !!p && p.capabilities.has(cap);
}

/** Console roles (contract section 10): owner = every capability; moderator = moderation and analytics. */
export const ROLE_CAPABILITIES: Record<"owner" | "moderator", ReadonlySet<Capability>> = {
  owner: ALL_CAPABILITIES,
  moderator: new Set<Capability>(["moderate_content", "view_analytics"]),
};

/** The admin JWT, or a console owner: what `/api/v1/admin/*`, re-enabling webhooks and the audit log need. */
export function isAdmin(p: Principal | null): boolean {
  return !!p && (p.kind === "admin" || (p.kind === "operator" && p.role === "owner"));
}
