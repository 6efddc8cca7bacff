// The service's hosted sign-in as <engagement-thread> uses it (contract section 20), for a page that
// hands the element no identity of its own: while the tenant's settings name a sign-in page
// (readerSettings.signInUrl), the element shows "Sign in", which opens that page in a popup
// (`?origin=<this page's origin>&lang=<the element's language>`). The page ends by posting
// {"type":"engagement:signed-in","token","reader"} to its opener: a message from the service's origin
// alone is taken, and its `rs_` token is kept in this page's localStorage under
// `engagement:session:<tenantId>`, then sent as X-Service-Identity like any assertion. "Sign out" ends
// the session at the service (POST /api/v1/me/sign-out) and forgets it; so does the service refusing
// it on any request (401 invalid_identity: expired, signed out elsewhere, banned). Every element of the
// page (and of the page's other tabs, through the `storage` event) follows a sign-in or sign-out.
// When the methods include `passkey`, a signed-in reader also sees "Add a passkey" (contract section
// 29), which opens the service's page for it (…/passkeys/new) in a popup; that page asks its opener
// for the reader's identity ({"type":"engagement:passkey-identity-request"}), and the element answers
// the popup it opened, from the service's origin alone, with the kept token.
// The host page's own identity, when it gives one, wins: the element then shows none of this.
import { css, html, nothing, type TemplateResult } from "lit";
import type { ThreadApi, Viewer } from "./api.js";
import { fill, type Strings } from "./i18n.js";

const PREFIX = "engagement:session:";
/** told to the page's other elements when this page signs in or out */
const CHANGED = "engagement:session-changed";
const TOKEN = /^rs_[A-Za-z0-9_-]{43,}$/;
const POPUP = { width: 480, height: 640 };

/** What the session needs from the element. */
export interface SessionHost {
  /** the element's language, for the sign-in page */
  language(): string;
  /** the stored session changed (signed in, out, or forgotten): read again */
  changed(): void;
  requestUpdate(): void;
}

/** The host page's own identity: `identity`, else what `getIdentity` answers (an empty answer or a throw: none). */
export async function hostIdentity(
  identity: string | null | undefined,
  getIdentity: (() => string | null | undefined | Promise<string | null | undefined>) | undefined,
): Promise<string | null> {
  if (identity) return identity;
  if (!getIdentity) return null;
  try {
    return (await getIdentity()) || null;
  } catch {
    return null;
  }
}

export class HostedSession {
  /** the sign-in page, absolute; null: hosted sign-in is off (or not known yet) */
  private page: URL | null = null;
  private tenantId: string | null = null;
  /** the token the element last read, to tell a change from an echo */
  private seen: string | null = null;
  /** the hosted sign-in offers passkeys */
  passkeys = false;
  /** the add-a-passkey popup this element opened, the only window it tells the token to */
  private passkeyPopup: Window | null = null;
  /** the popup could not open (blocked) */
  blocked = false;
  busy = false;

  constructor(private readonly host: SessionHost) {}

  /**
   * The settings' sign-in page (a path is put after the API base); true when this made a stored token
   * usable that was not before (the element loads again with it).
   */
  configure(base: string, signInUrl: string | null, methods: readonly string[] = []): boolean {
    const before = this.token;
    this.page = null;
    this.tenantId = null;
    this.passkeys = methods.includes("passkey");
    if (signInUrl) {
      try {
        const page = new URL(signInUrl.startsWith("/") ? base + signInUrl : signInUrl);
        const tenant = /\/auth\/v1\/([^/]+)\/sign-in$/.exec(page.pathname)?.[1];
        if (tenant) [this.page, this.tenantId] = [page, decodeURIComponent(tenant)];
      } catch {
        // not a URL: hosted sign-in stays off
      }
    }
    this.seen = this.token;
    return !before && !!this.seen;
  }

  /** whether the tenant's sign-in page is known */
  get enabled(): boolean {
    return this.page !== null;
  }

  /** the kept session token of this tenant, if any */
  get token(): string | null {
    if (!this.tenantId) return null;
    try {
      return localStorage.getItem(PREFIX + this.tenantId);
    } catch {
      return null;
    }
  }

  connect(): void {
    window.addEventListener("message", this.onMessage);
    window.addEventListener("storage", this.onChange);
    window.addEventListener(CHANGED, this.onChange);
  }

  disconnect(): void {
    window.removeEventListener("message", this.onMessage);
    window.removeEventListener("storage", this.onChange);
    window.removeEventListener(CHANGED, this.onChange);
  }

  /** "Sign in": the sign-in page in a popup, centred on the window. */
  open(): void {
    this.popup(this.page);
  }

  /** "Add a passkey": the service's page for it in a popup, told the token when it asks. */
  addPasskey(): void {
    if (!this.page || !this.token) return;
    this.passkeyPopup = this.popup(new URL(this.page.pathname.replace(/\/sign-in$/, "/passkeys/new"), this.page));
  }

  private popup(page: URL | null): Window | null {
    if (!page) return null;
    const url = new URL(page);
    url.searchParams.set("origin", location.origin);
    url.searchParams.set("lang", this.host.language());
    const left = Math.round(screenX + Math.max(0, (outerWidth - POPUP.width) / 2));
    const top = Math.round(screenY + Math.max(0, (outerHeight - POPUP.height) / 2));
    const popup = window.open(
      url.toString(),
      "engagement-sign-in",
      `popup,width=${POPUP.width},height=${POPUP.height},left=${left},top=${top}`,
    );
    this.blocked = !popup;
    popup?.focus();
    this.host.requestUpdate();
    return popup;
  }

  /** "Sign out": ended at the service, forgotten here (even when the service could not be reached). */
  async signOut(api: ThreadApi | null): Promise<void> {
    const token = this.token;
    if (!token || this.busy) return;
    this.busy = true;
    this.host.requestUpdate();
    try {
      await api?.signOut(token);
    } catch {
      // unreachable: the token is forgotten on this page all the same
    }
    this.busy = false;
    this.forget(token);
  }

  /** The service refused an identity: when it is the kept token, it is over. */
  refused(identity: string): void {
    this.forget(identity);
  }

  private forget(token: string): void {
    if (!this.tenantId || this.token !== token) return;
    this.store(null);
  }

  private store(token: string | null): void {
    try {
      if (token) localStorage.setItem(PREFIX + this.tenantId, token);
      else localStorage.removeItem(PREFIX + this.tenantId);
    } catch {
      // storage refused (a private window's quota): the change is only this page's
    }
    window.dispatchEvent(new CustomEvent(CHANGED));
  }

  private readonly onMessage = (e: MessageEvent): void => {
    if (!this.page || e.origin !== this.page.origin) return;
    const data = e.data as { type?: unknown; token?: unknown } | null;
    if (data?.type === "engagement:passkey-identity-request") {
      // only the popup this element opened, at the service's origin, is told the token
      const token = this.token;
      if (token && this.passkeyPopup && e.source === this.passkeyPopup) {
        this.passkeyPopup.postMessage({ type: "engagement:passkey-identity", token }, this.page.origin);
      }
      return;
    }
    if (data?.type !== "engagement:signed-in" || typeof data.token !== "string" || !TOKEN.test(data.token)) return;
    this.blocked = false;
    if (data.token !== this.token) this.store(data.token);
  };

  private readonly onChange = (e: Event): void => {
    if (e instanceof StorageEvent && e.key !== null && e.key !== PREFIX + this.tenantId) return;
    if (this.token === this.seen) return;
    this.seen = this.token;
    this.host.changed();
  };
}

/** "Sign in", or the reader's name with "Sign out"; nothing when the page gives the identity or sign-in is off. */
export function renderSession(
  t: Strings,
  session: HostedSession,
  viewer: Viewer | null,
  hostIdentity: boolean,
  api: ThreadApi | null,
): TemplateResult | typeof nothing {
  if (hostIdentity || !session.enabled) return nothing;
  if (session.token) {
    if (!viewer) return nothing;
    return html`<div class="session" part="session">
      <span class="muted">${fill(t.signed_in_as, { name: viewer.name })}</span>
      ${
        session.passkeys
          ? html`<button class="secondary" part="passkey button" @click=${() => session.addPasskey()}>${t.add_passkey}</button>`
          : nothing
      }
      <button class="secondary" part="sign-out button" ?disabled=${session.busy} @click=${() => void session.signOut(api)}>
        ${t.sign_out}
      </button>
    </div>`;
  }
  return html`<div class="session" part="session">
    <button class="primary" part="sign-in button" @click=${() => session.open()}>${t.sign_in_button}</button>
    ${session.blocked ? html`<p class="error" part="error" role="alert">${t.sign_in_blocked}</p>` : nothing}
  </div>`;
}

export const sessionStyles = css`
  .session {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0.5rem;
  }
  .session .error {
    flex-basis: 100%;
    margin: 0;
  }
`;
