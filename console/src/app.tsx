// The console shell: sign-in, navigation and the screens (hash routes: #/moderation,
// #/moderation/reported, #/readers/<id>, #/keys, #/settings/identity, #/settings/sign-in, #/settings/email, #/fediverse, #/bluesky, #/outbox, …).
// The Outbox is in the navigation only while the service keeps emails instead of sending them
// (emailStatus.mode "outbox", read once for owners). A moderator who opens an owner's screen is told
// why it is not shown; a sign-in link the server refused says why (?signin=…, set by
// src/modules/console/engine/http-routes.ts). The header names the tenant (its id on hover); the
// Moderation link says how many comments are pending, read again when the queue changes here, every
// 20 seconds (other moderators) and when the tab comes back into view. The sign-in page leads with
// the link route (`npm run cli -- console-link`): an owner made by that command has no password; then
// "Sign in with a passkey" (and the Email field's autofill offers passkeys: console/src/passkeys.ts),
// then the password form. The header's tenant and operator are the link to Your account (#/account),
// which lists the operator's passkeys.
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, gql, loadSession, signIn, signOut, type Session } from "./api";
import { armPasskeyAutofill, passkeysSupported, signInWithPasskey } from "./passkeys";
import { EmailModeDocument, PendingCountDocument } from "./gql/graphql";
import { ErrorMessage, messageOf } from "./ui";
import { ModerationScreen } from "./screens/moderation";
import { DiscussionsScreen } from "./screens/discussions";
import { KeysScreen } from "./screens/keys";
import { WebhooksScreen } from "./screens/webhooks";
import { SettingsScreen } from "./screens/settings";
import { DeliveryScreen } from "./screens/settings-delivery";
import { IdentityScreen } from "./screens/settings-identity";
import { SignInScreen } from "./screens/settings-sign-in";
import { PortabilityScreen } from "./screens/settings-portability";
import { EmailScreen } from "./screens/settings-email";
import { AlertsScreen } from "./screens/settings-alerts";
import { OutboxScreen } from "./screens/outbox";
import { SafetyScreen } from "./screens/safety";
import { ReportedScreen } from "./screens/reported";
import { ReaderScreen } from "./screens/reader";
import { AnalyticsScreen } from "./screens/analytics";
import { AuditScreen } from "./screens/audit";
import { FediverseScreen } from "./screens/fediverse";
import { BlueskyScreen } from "./screens/bluesky";
import { AccountScreen } from "./screens/account";

const SCREENS = [
  { path: "moderation", name: "Moderation", owner: false },
  { path: "discussions", name: "Discussions", owner: false },
  { path: "keys", name: "Keys", owner: true },
  { path: "webhooks", name: "Webhooks", owner: true },
  { path: "settings", name: "Settings", owner: true },
  { path: "safety", name: "Safety", owner: true },
  { path: "fediverse", name: "Fediverse", owner: true },
  { path: "bluesky", name: "Bluesky", owner: true },
  { path: "analytics", name: "Analytics", owner: false },
  { path: "audit", name: "Audit log", owner: true },
  // in the navigation only while emails are kept instead of sent (EMAIL_OUTBOX=1)
  { path: "outbox", name: "Outbox", owner: true, outbox: true },
  // not in the navigation: reached from a comment's author
  { path: "readers", name: "Reader", owner: false, hidden: true },
  // not in the navigation: "Your account" beside Sign out
  { path: "account", name: "Your account", owner: false, hidden: true },
] as const;

function useHashRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadSession().then(setSession, (e: unknown) => {
      setError(messageOf(e));
      setSession(null);
    });
  }, []);
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (!session) return <SignIn onSignedIn={setSession} error={error} />;
  return <Shell session={session} onSignedOut={() => setSession(null)} />;
}

/** Why the server refused a sign-in link (its redirect's ?signin=). */
const LINK_REFUSED: Record<string, string> = {
  "link-expired": "That sign-in link has expired or was used already. Ask for a new one.",
  "unknown-operator":
    "That sign-in link names an email that is not an operator of this tenant. Ask an owner to add you (npm run cli -- operator create), then for a new link.",
  "unknown-tenant": "That sign-in link names a tenant that does not exist.",
};

function SignIn({ onSignedIn, error: initial }: { onSignedIn: (s: Session) => void; error: string | null }) {
  const refused = new URLSearchParams(location.search).get("signin");
  // why there is no session (a refused link, the service down): above both ways in
  const why = initial ?? (refused ? (LINK_REFUSED[refused] ?? LINK_REFUSED["link-expired"]!) : null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [passkeyError, setPasskeyError] = useState<string | null>(null);
  const [passkeyBusy, setPasskeyBusy] = useState(false);
  const supported = passkeysSupported();
  // the Email field's autofill offers the service's passkeys while this page shows
  useEffect(() => (supported ? armPasskeyAutofill(onSignedIn, (e) => setPasskeyError(messageOf(e))) : undefined), []);
  const withPasskey = () => {
    setPasskeyBusy(true);
    setPasskeyError(null);
    signInWithPasskey(false)
      .then(onSignedIn, (err: unknown) => {
        if (!(err instanceof ApiError && err.code === "aborted")) setPasskeyError(messageOf(err));
      })
      .finally(() => setPasskeyBusy(false));
  };
  return (
    <main class="signin">
      <h1>Engagement console</h1>
      <ErrorMessage error={why} />
      <section aria-labelledby="link-title">
        <h2 id="link-title">Sign in with a link</h2>
        <p>In the service's folder, run</p>
        <pre>
          <code>npm run cli -- console-link --tenant &lt;id&gt;</code>
        </pre>
        <p>
          and open the link it prints (its last line; single-use, valid 15 minutes). Without <code>--email</code> it signs you in as the
          tenant's first owner, who has no password: this is their way in. Add <code>--email you@example.com</code> for another operator.
        </p>
      </section>
      <section aria-labelledby="passkey-title">
        <h2 id="passkey-title">Or sign in with a passkey</h2>
        <p class="hint" id="passkey-hint">
          {supported
            ? "For operators who have added one: once signed in, the tenant and email at the top open Your account, where passkeys are added. Your browser may also offer one in the Email field below."
            : "This browser cannot use passkeys."}
        </p>
        <ErrorMessage error={passkeyError} />
        <button type="button" onClick={withPasskey} disabled={!supported || passkeyBusy} aria-describedby="passkey-hint">
          Sign in with a passkey
        </button>
      </section>
      <section>
        <h2>Or sign in with a password</h2>
        <p class="hint">
          For operators made with <code>npm run cli -- operator create</code>, which prints their password once.
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            setBusy(true);
            signIn(String(f.get("tenantId")), String(f.get("email")), String(f.get("password")))
              .then(onSignedIn, (err: unknown) =>
                setError(
                  err instanceof ApiError && err.code === "invalid_credentials"
                    ? `${err.message} An owner made by console-link has no password: sign in with a link instead.`
                    : messageOf(err),
                ),
              )
              .finally(() => setBusy(false));
          }}
        >
          <label>
            Tenant
            <input name="tenantId" autoComplete="organization" required />
          </label>
          <label>
            Email
            {/* "webauthn": the autofill offers passkeys here too */}
            <input name="email" type="email" autoComplete="username webauthn" required />
          </label>
          <label>
            Password
            <input name="password" type="password" autoComplete="current-password" required />
          </label>
          <ErrorMessage error={error} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      </section>
    </main>
  );
}

/** How often the pending count is read again while nothing here changed the queue (other moderators, new comments). */
const PENDING_POLL_MS = 20_000;

/** The number of pending comments (the count stops at 1000: "1000+"), kept current; null until known. */
function usePendingCount(): string | null {
  const [count, setCount] = useState<number | null>(null);
  const read = useCallback(() => {
    gql(PendingCountDocument).then(
      (d) => setCount(d.pendingCommentCount),
      () => undefined,
    );
  }, []);
  useEffect(() => {
    read();
    let soon: ReturnType<typeof setTimeout> | undefined;
    // a burst of changes (a bulk approve, a flood of new comments) is read once
    const changed = () => {
      clearTimeout(soon);
      soon = setTimeout(read, 250);
    };
    const visible = () => document.visibilityState === "visible" && read();
    const every = setInterval(() => document.visibilityState === "visible" && read(), PENDING_POLL_MS);
    window.addEventListener("console:queue-changed", changed);
    document.addEventListener("visibilitychange", visible);
    return () => {
      clearTimeout(soon);
      clearInterval(every);
      window.removeEventListener("console:queue-changed", changed);
      document.removeEventListener("visibilitychange", visible);
    };
  }, [read]);
  return count === null ? null : count >= 1000 ? "1000+" : String(count);
}

function Shell({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const route = useHashRoute();
  const owner = session.operator.role === "owner";
  const pending = usePendingCount();
  const tenant = session.tenantName || session.tenantId;
  // how email leaves the service (emailStatus needs manage_settings: owners only); undefined until known
  const [emailMode, setEmailMode] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (owner)
      gql(EmailModeDocument).then(
        (d) => setEmailMode(d.emailStatus.mode),
        () => setEmailMode(undefined),
      );
  }, [owner]);
  const screens = SCREENS.filter((s) => owner || !s.owner);
  const asked = SCREENS.find((s) => s.path === route[0]);
  // an owner's screen opened by a moderator: say so rather than show another screen silently
  const denied = asked && !screens.includes(asked) ? asked : undefined;
  const current = denied ?? screens.find((s) => s.path === route[0]) ?? screens[0]!;
  useEffect(() => {
    document.title = `${current.name} · Engagement console`;
  }, [current]);
  return (
    <div class="shell">
      <header>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <span class="brand">Engagement console</span>
        <nav aria-label="Main">
          <ul>
            {screens
              .filter((s) => !("hidden" in s) && (!("outbox" in s) || emailMode === "outbox"))
              .map((s) => (
                <li key={s.path}>
                  <a
                    href={`#/${s.path}`}
                    aria-current={s === current ? "page" : undefined}
                    {...(s.path === "moderation" && pending !== null ? { "aria-describedby": "pending-count" } : {})}
                  >
                    {s.name}
                    {/* the link's name stays "Moderation"; the count is its description ("3 pending") */}
                    {s.path === "moderation" && pending !== null && (
                      <span class="count" aria-hidden="true">
                        {" "}
                        ({pending})
                      </span>
                    )}
                  </a>
                  {s.path === "moderation" && pending !== null && (
                    <span id="pending-count" hidden>
                      {pending} pending
                    </span>
                  )}
                </li>
              ))}
          </ul>
        </nav>
        <div class="account">
          {/* who is signed in, the way to their account (its passkeys) */}
          <a
            class="who"
            href="#/account"
            aria-current={current.path === "account" ? "page" : undefined}
            title={`Your account: ${tenant} (tenant id: ${session.tenantId}) · ${session.operator.email} (${session.operator.role})`}
          >
            <span class="sr-only">Your account: </span>
            <strong>{tenant}</strong>
            <span>
              · {session.operator.email} ({session.operator.role})
            </span>
          </a>
          <button type="button" onClick={() => void signOut().then(onSignedOut)}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {denied && <OwnersOnly name={denied.name} />}
        {!denied && current.path === "moderation" && (route[1] === "reported" ? <ReportedScreen /> : <ModerationScreen />)}
        {!denied && current.path === "readers" && route[1] && <ReaderScreen id={route[1]} owner={owner} />}
        {!denied && current.path === "discussions" && <DiscussionsScreen id={route[1]} />}
        {!denied && current.path === "keys" && <KeysScreen />}
        {!denied && current.path === "webhooks" && <WebhooksScreen id={route[1]} />}
        {!denied &&
          current.path === "settings" &&
          (route[1] === "identity" ? (
            <IdentityScreen />
          ) : route[1] === "sign-in" ? (
            <SignInScreen tenantId={session.tenantId} />
          ) : route[1] === "email" ? (
            <EmailScreen />
          ) : route[1] === "alerts" ? (
            <AlertsScreen />
          ) : route[1] === "portability" ? (
            <PortabilityScreen />
          ) : route[1] === "delivery" ? (
            <DeliveryScreen />
          ) : (
            <SettingsScreen />
          ))}
        {!denied && current.path === "safety" && <SafetyScreen />}
        {!denied && current.path === "fediverse" && <FediverseScreen />}
        {!denied && current.path === "bluesky" && <BlueskyScreen />}
        {!denied && current.path === "analytics" && <AnalyticsScreen />}
        {!denied && current.path === "audit" && <AuditScreen />}
        {!denied && current.path === "outbox" && <OutboxScreen mode={emailMode} />}
        {!denied && current.path === "account" && <AccountScreen session={session} />}
      </main>
    </div>
  );
}

function OwnersOnly({ name }: { name: string }) {
  return (
    <section aria-labelledby="denied-title">
      <h1 id="denied-title">{name}</h1>
      <p class="error" role="alert">
        {name} is for owners of this tenant. You are signed in as a moderator: you can moderate comments, look after discussions and see
        analytics. Ask an owner of the tenant if you need something done there.
      </p>
      <p>
        <a href="#/moderation">Go to the moderation queue</a>
      </p>
    </section>
  );
}
