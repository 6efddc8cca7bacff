// Email links of the hosted sign-in (contract section 20), and guests' address confirmations.
//  - POST /auth/v1/{tenantId}/email {"email","origin"} → 202 {} whatever the address: nothing tells a
//    known address from an unknown one (no reader is looked up). At most 5 links per address per hour
//    (app.readerSignIn.perEmail, shared by every instance): past that the answer is the same 202 and
//    nothing is sent. The link goes out through the email worker and the tenant's SMTP server
//    (src/modules/email/engine/links.ts: the token is never stored, only its SHA-256 in
//    sign_in_tokens, kind email_link, data {address, origin, lang, relay?}); valid 15 minutes, single
//    use. `relay` is the asking sign-in page's own nonce: the link's finish reaches that popup alone.
//  - GET of the link never acts (mail scanners fetch links): it shows a page asking for the name
//    (prefilled with the reader's, required for a new reader) and a button; its POST spends the token
//    and starts the session (reader `email:` + 32 hex of a MAC of the lower-cased address under the
//    tenant's key: src/auth/reader-ids.ts; never a plain hash, which anyone could compute).
//  - A guest who gives an address gets a confirmation link the same way (sign_in_tokens kind
//    email_confirm, data {address, readerId, lang}; valid 24 hours, single use; the same 5 an hour per
//    address); until it is followed the guest's readers.email stays null, so no reply email goes to
//    an address nobody confirmed.
// Under engine/: the tenant comes from the path, not from a key's request context.
import type { AppServices } from "../../../context/services.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { plausibleAddress } from "../../../auth/identity.js";
import { startSession } from "../../../auth/reader-sessions.js";
import { errors, type FieldError } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import { spendOneTimeToken } from "../../../auth/one-time-tokens.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { escapeHtml } from "../../email/templates.js";
import { LINK_PLACEHOLDER, mailCanGo, queueLinkEmail, type LinkKind } from "../../email/engine/links.js";
import { isSignInLanguage, pickLanguage, say, type SignInLanguage, type SignInStringKey } from "./strings.js";
import { RELAY_NONCE, type SignedIn } from "./pages.js";
import { isReaderName } from "../../../lib/reader-name.js";

/** How long a sign-in link works. */
export const LINK_TTL_MS = 15 * 60_000;
/** How long a guest's confirmation link works. */
export const CONFIRM_TTL_MS = 24 * 3_600_000;

/** What a per-address limit counts by, and sign_in_tokens' subject: the id the address has on the tenant (a MAC), never the address or a plain hash of it. */
const addressKey = (app: AppServices, tenantId: string, address: string) => app.readerIds.email(tenantId, address);

/** A link's rendered email: subject, text and HTML, the link where LINK_PLACEHOLDER stands. */
export function renderLinkEmail(lang: SignInLanguage, kind: LinkKind, site: string) {
  const keys: Record<"subject" | "text" | "button", SignInStringKey> =
    kind === "sign_in"
      ? { subject: "mail_subject", text: "mail_text", button: "mail_button" }
      : { subject: "confirm_mail_subject", text: "confirm_mail_text", button: "confirm_mail_button" };
  const words = (k: SignInStringKey) => say(lang, k, { site });
  const subject = words(keys.subject).replace(/[\r\n]+/g, " ");
  const text = [words(keys.text), "", LINK_PLACEHOLDER, "", words("mail_ignore"), ""].join("\n");
  const html = [
    "<!doctype html>",
    `<html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:40em">`,
    `<p>${escapeHtml(words(keys.text))}</p>`,
    `<p><a href="${LINK_PLACEHOLDER}" style="display:inline-block;padding:.6em 1.2em;background:#2457c5;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(words(keys.button))}</a></p>`,
    `<p style="word-break:break-all;color:#555;font-size:.9em">${LINK_PLACEHOLDER}</p>`,
    `<p style="color:#666;font-size:.9em">${escapeHtml(words("mail_ignore"))}</p>`,
    "</body></html>",
    "",
  ].join("\n");
  return { subject, text, html };
}

const allowedOrigin = (tenant: Tenant, origin: unknown): origin is string =>
  typeof origin === "string" && resolveSettings(tenant.settings).allowedOrigins.includes(origin);

const languageOf = (v: unknown): SignInLanguage => (isSignInLanguage(v) ? v : pickLanguage(v, undefined));

/**
 * Asks for a sign-in link (POST /auth/v1/{tenantId}/email). Resolves (202) whether the address is
 * known or not, and also when its hourly budget is spent (nothing sent then); 422 for a body that is
 * not an address and an allowed origin.
 */
export async function requestEmailLink(app: AppServices, tenant: Tenant, input: Record<string, unknown>): Promise<void> {
  const unknown = Object.keys(input).filter((k) => !["email", "origin", "lang", "relay"].includes(k));
  const problems: FieldError[] = unknown.map((path) => ({ path, message: "is not a known field" }));
  const address = typeof input.email === "string" ? input.email.trim() : null;
  if (!plausibleAddress(address)) problems.push({ path: "email", message: "must be an email address" });
  if (!allowedOrigin(tenant, input.origin)) {
    problems.push({ path: "origin", message: "must be one of the site's allowedOrigins (the page the sign-in is for)" });
  }
  if (input.lang !== undefined && typeof input.lang !== "string") problems.push({ path: "lang", message: "must be a string" });
  const relay = input.relay;
  if (relay !== undefined && (typeof relay !== "string" || !RELAY_NONCE.test(relay))) {
    problems.push({ path: "relay", message: "must be 22–128 URL-safe characters (the waiting sign-in page's own nonce)" });
  }
  if (problems.length) throw errors.validation(problems);
  const lang = languageOf(input.lang);
  const subject = await addressKey(app, tenant.id, address!);
  if (!(await app.readerSignIn.perEmail.tryConsume(`${tenant.id}\n${subject}`))) return;
  if (!mailCanGo(app, tenant.settings)) {
    app.log.warn({ tenantId: tenant.id }, "email sign-in asked for, but the site's mail can go nowhere (no SMTP server)");
    return;
  }
  await queueLinkEmail(
    app,
    tenant.id,
    { kind: "sign_in", to: address!, ...renderLinkEmail(lang, "sign_in", tenant.name) },
    {
      kind: "email_link",
      subject,
      data: { address: address!, origin: input.origin as string, lang, ...(typeof relay === "string" ? { relay } : {}) },
      expiresAt: new Date(app.clock.now().getTime() + LINK_TTL_MS),
    },
  );
}

/** Sends a guest's confirmation link for the address they gave (within the address's hourly budget). */
export async function sendGuestConfirmation(
  app: AppServices,
  tenant: Tenant,
  guest: { readerId: string; address: string; lang: SignInLanguage },
): Promise<void> {
  const subject = await addressKey(app, tenant.id, guest.address);
  if (!(await app.readerSignIn.perEmail.tryConsume(`${tenant.id}\n${subject}`))) return;
  if (!mailCanGo(app, tenant.settings)) return;
  await queueLinkEmail(
    app,
    tenant.id,
    { kind: "email_confirm", to: guest.address, ...renderLinkEmail(guest.lang, "email_confirm", tenant.name) },
    {
      kind: "email_confirm",
      subject,
      data: { address: guest.address, readerId: guest.readerId, lang: guest.lang },
      expiresAt: new Date(app.clock.now().getTime() + CONFIRM_TTL_MS),
    },
  );
}

/** Why a link's page cannot go on: shown as a problem page with this status (nothing written). */
export class LinkProblem extends Error {
  constructor(
    readonly status: 400 | 403 | 410,
    readonly key: SignInStringKey,
    readonly lang: SignInLanguage = "en",
  ) {
    super(key);
  }
}

export interface OpenLink {
  kind: "email_link" | "email_confirm";
  address: string;
  lang: SignInLanguage;
  /** email_link: the page the sign-in is for */
  origin: string | null;
  /** email_confirm: the guest */
  readerId: string | null;
  /** email_link: the reader's name now, when the address has signed in before */
  currentName: string | null;
  /** email_link: the relay nonce of the sign-in page that asked for it (the only popup its finish reaches) */
  relay: string | null;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const FIND = `SELECT kind, data, expires_at AS "expiresAt", used_at AS "usedAt" FROM sign_in_tokens
  WHERE tenant_id = $1 AND kind IN ('email_link', 'email_confirm') AND token_hash = $2`;

/** A link that can still be used; LinkProblem 400 for one never made, 410 for one used or expired. Reads only. */
export async function openLink(app: AppServices, tenant: Tenant, token: string): Promise<OpenLink> {
  if (!TOKEN.test(token)) throw new LinkProblem(400, "link_unknown");
  const store = app.stores(tenant.id);
  const [row] = await store.sql.query<{ kind: OpenLink["kind"]; data: Record<string, unknown>; expiresAt: Date; usedAt: Date | null }>(
    FIND,
    [sha256(token, "hex")],
    "email_link_find",
  );
  if (!row) throw new LinkProblem(400, "link_unknown");
  const lang = languageOf(row.data.lang);
  if (row.usedAt !== null || row.expiresAt.getTime() <= app.clock.now().getTime()) throw new LinkProblem(410, "link_spent", lang);
  const address = String(row.data.address);
  let currentName: string | null = null;
  if (row.kind === "email_link") {
    const [reader] = await store.sql.query<{ name: string }>(
      "SELECT name FROM readers WHERE tenant_id = $1 AND id = $2",
      [await app.readerIds.email(tenant.id, address)],
      "email_link_reader",
    );
    currentName = reader?.name ?? null;
  }
  return {
    kind: row.kind,
    address,
    lang,
    origin: typeof row.data.origin === "string" ? row.data.origin : null,
    readerId: typeof row.data.readerId === "string" ? row.data.readerId : null,
    currentName,
    relay: typeof row.data.relay === "string" ? row.data.relay : null,
  };
}

/** Spends the link (once, on every instance: the first UPDATE wins); LinkProblem 410 when it was spent meanwhile. */
async function spend(app: AppServices, tenant: Tenant, link: OpenLink, token: string): Promise<void> {
  const spent = await spendOneTimeToken(app.stores(tenant.id), link.kind, token, app.clock.now(), "email_link_spend");
  if (spent === null) throw new LinkProblem(410, "link_spent", link.lang);
}

/** The name a link's form gives: trimmed; the reader's current one when left empty; null when none will do. */
export function chosenName(link: OpenLink, given: unknown): string | null {
  const name = typeof given === "string" ? given.trim() : "";
  if (name === "") return link.currentName;
  return isReaderName(name) ? name : null;
}

/**
 * The link's form was sent: spends the token and starts the session (email_link), or confirms the
 * guest's address (email_confirm). `name` was checked by chosenName.
 */
export async function useLink(
  app: AppServices,
  tenant: Tenant,
  token: string,
  link: OpenLink,
  name: string | null,
): Promise<{ session: SignedIn; origin: string; relay: string | null } | null> {
  const settings = resolveSettings(tenant.settings);
  if (link.kind === "email_link") {
    // the tenant may have withdrawn the method or the page's origin since the link was sent
    if (!settings.signIn.methods.includes("email")) throw new LinkProblem(403, "no_methods", link.lang);
    if (!link.origin || !settings.allowedOrigins.includes(link.origin)) throw new LinkProblem(403, "bad_origin", link.lang);
    if (name === null) throw new LinkProblem(400, "name_required", link.lang);
    await spend(app, tenant, link, token);
    const session = await startSession(
      app.stores(tenant.id),
      app.clock,
      { id: await app.readerIds.email(tenant.id, link.address), name, avatarUrl: null, email: link.address, method: "email" },
      settings.signIn.sessionDays,
    );
    return { session, origin: link.origin, relay: link.relay };
  }
  await spend(app, tenant, link, token);
  await app
    .stores(tenant.id)
    .sql.query(
      "UPDATE readers SET email = $3, email_suppressed_at = NULL, updated_at = $4 WHERE tenant_id = $1 AND id = $2",
      [link.readerId, link.address, app.clock.now()],
      "email_confirm",
    );
  return null;
}
