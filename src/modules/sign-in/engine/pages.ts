// The hosted sign-in's pages (contract section 20): one shell for all of them — light and dark
// (prefers-color-scheme), a strict CSP of their own (no inline script but the page's own, by nonce;
// nothing framed; forms only to ourselves) — and the two ends every method shares: the finish page,
// which posts {"type":"engagement:signed-in","token","reader"} to window.opener with the page's
// origin as the target (the origin was checked against allowedOrigins when the sign-in began), and
// the problem page. Text in pages is escaped here (escapeHtml); nothing a reader or tenant typed is
// ever put in a page unescaped, nor in the script (JSON with `<` escaped).
import { randomBytes } from "node:crypto";
import { say, type SignInLanguage } from "./strings.js";

export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** JSON safe inside a <script>: no `</script>`, no HTML comment openers, no line separators. */
export const scriptJson = (v: unknown): string =>
  JSON.stringify(v)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

export interface HostedPage {
  /** the answer's headers: the CSP with this page's nonce, no caching, no referrer */
  headers: Record<string, string>;
  html: string;
}

/** CSP: our own scripts by nonce (and files under /auth/v1/static), our own styles (by nonce, and the ALTCHA widget's stylesheet), forms and fetches to ourselves. */
const csp = (nonce: string) =>
  [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' 'self'`,
    `style-src 'nonce-${nonce}' 'self'`,
    "img-src 'self' https: data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    // ALTCHA's solver runs in a worker made from a blob
    "worker-src 'self' blob:",
  ].join("; ");

const STYLE = `:root{color-scheme:light dark;--bg:#fff;--fg:#1d2430;--muted:#5b6472;--accent:#2457c5;--border:#c9ced6;--error:#b3261e}
@media (prefers-color-scheme:dark){:root{--bg:#16181d;--fg:#e6e8ec;--muted:#a3aab5;--accent:#8ab4ff;--border:#3a3f48;--error:#ffb4ab}}
*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;background:var(--bg);color:var(--fg);margin:0}
main{max-width:26rem;margin:2.5rem auto;padding:0 1.25rem}h1{font-size:1.5rem;margin:0 0 1rem}
p{color:var(--muted)}label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=email]{width:100%;font:inherit;padding:.5rem .6rem;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
[hidden]{display:none!important}button.secondary{background:transparent;color:var(--accent);box-shadow:inset 0 0 0 1px var(--accent)}.actions{display:flex;flex-wrap:wrap;gap:.5rem}
button,.button{display:inline-block;font:inherit;padding:.55rem 1rem;border:0;border-radius:6px;background:var(--accent);color:var(--bg);cursor:pointer;text-decoration:none;margin-top:.75rem}
section{border-top:1px solid var(--border);padding-top:1rem;margin-top:1.25rem}.error{color:var(--error)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}.visually-hidden{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
h2{font-size:1.1rem;margin:0 0 .25rem}.hint{font-size:.875rem;margin:.25rem 0 0}ul.providers{list-style:none;padding:0;margin:0}
altcha-widget{display:block;margin-top:.75rem;--altcha-color-base:var(--bg);--altcha-color-text:var(--fg);--altcha-color-border:var(--border);--altcha-color-border-focus:var(--accent);--altcha-color-footer-bg:var(--bg);--altcha-max-width:100%}`;

/**
 * A page of the hosted sign-in: `body` is trusted HTML (escape what it holds); `script` runs with the
 * page's nonce; `head` is trusted HTML for the head (our own files: the ALTCHA widget's script and styles).
 */
export function hostedPage(opts: { lang: string; title: string; body: string; script?: string; head?: string }): HostedPage {
  const nonce = randomBytes(16).toString("base64");
  const html = `<!doctype html>
<html lang="${escapeHtml(opts.lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(opts.title)}</title><style nonce="${nonce}">${STYLE}</style>${opts.head ?? ""}</head>
<body><main><h1>${escapeHtml(opts.title)}</h1>${opts.body}</main>${opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : ""}</body></html>`;
  return {
    html,
    headers: {
      "Content-Security-Policy": csp(nonce),
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "X-Content-Type-Options": "nosniff",
      "Cross-Origin-Opener-Policy": "unsafe-none",
    },
  };
}

export interface SignedIn {
  token: string;
  reader: { id: string; name: string; avatarUrl: string | null };
}

/** The message a finished sign-in posts to its opener (contract section 20). */
export const signedInMessage = (s: SignedIn) => ({ type: "engagement:signed-in", token: s.token, reader: s.reader });

/**
 * The end of every method, as a script function every page that finishes a sign-in holds:
 * `engagementFinish(message, origin[, relay[, keepOpen]])` posts the message to `window.opener` for
 * `origin` alone (the browser drops it for any other page in the opener) and closes (unless
 * `keepOpen`: the window goes on to offer a passkey, passkey-pages.ts); with no opener (an email
 * link opened in a new tab) a BroadcastChannel "engagement:sign-in" tells a sign-in popup of the same
 * browser, which posts it to its own opener (SIGN_IN_LISTEN_SCRIPT) — but only the popup whose own
 * `relay` nonce the link carried (see docs/sign-in.md, "One browser, one sign-in").
 */
export const FINISH_SCRIPT = `function engagementFinish(m,o,r,k){
if(window.opener){try{window.opener.postMessage(m,o)}catch(e){}if(!k)setTimeout(function(){window.close()},300);return}
if(!r)return;try{var c=new BroadcastChannel("engagement:sign-in");c.postMessage({message:m,origin:o,relay:r});c.close()}catch(e){}}`;

/**
 * The other end of the channel, for a sign-in popup waiting for an email link to be opened:
 * `engagementListen(origin, relay)` forwards a finished sign-in for that same origin, carrying the
 * popup's own relay nonce (sent with its request for the link), to the popup's opener and closes the
 * popup. A sign-in finished from anyone else's link — an attacker's, opened in this browser — carries
 * another nonce (or none) and is ignored.
 */
export const SIGN_IN_LISTEN_SCRIPT = `function engagementListen(o,r){
try{var c=new BroadcastChannel("engagement:sign-in");c.onmessage=function(e){var d=e.data;
if(!d||d.origin!==o||!r||d.relay!==r||!d.message||d.message.type!=="engagement:signed-in")return;
if(window.opener){try{window.opener.postMessage(d.message,o)}catch(x){}}c.close();setTimeout(function(){window.close()},300)}}catch(e){}}`;

/** The sessionStorage key a finish leaves the new session under for the page that offers a passkey (passkey-pages.ts). */
export const OFFER_KEY = "engagement:passkey-offer";

/**
 * A finish's last step when the site offers passkeys: the session left in this tab for the offer
 * page, which this tab then becomes (`engagementOffer(token, path)`; the opener has its message already).
 */
export const OFFER_SCRIPT = `function engagementOffer(t,p){try{sessionStorage.setItem(${scriptJson(OFFER_KEY)},t)}catch(e){return false}location.replace(p);return true}`;

/** A popup's relay nonce, as the sign-in page makes it and POST …/email takes it. */
export const RELAY_NONCE = /^[A-Za-z0-9_-]{22,128}$/;

/**
 * The finish page: the session posted to the opener, or (an email link's, with the relay nonce of the
 * popup that asked for it) to that waiting popup alone; in the sign-in's language.
 */
export function finishPage(opts: {
  lang: SignInLanguage;
  origin: string;
  session: SignedIn;
  relay?: string | null;
  /** the page that offers a passkey next (passkeyOfferPath), when the site offers them */
  offer?: string | null;
}): HostedPage {
  const { lang, session } = opts;
  const message = signedInMessage(session);
  // the message and the origin; the relay when there is one (or null before keepOpen); keepOpen when a passkey is offered next
  const args = [scriptJson(message), scriptJson(opts.origin)];
  if (opts.relay || opts.offer) args.push(scriptJson(opts.relay ?? null));
  if (opts.offer) args.push("true");
  const offer = opts.offer ? `${OFFER_SCRIPT}\nengagementOffer(${scriptJson(session.token)},${scriptJson(opts.offer)});` : "";
  return hostedPage({
    lang,
    title: say(lang, "signed_in_title"),
    body: `<p role="status">${escapeHtml(say(lang, "signed_in_text", { name: session.reader.name }))}</p>`,
    script: `${FINISH_SCRIPT}
engagementFinish(${args.join(",")});${offer}`,
  });
}

/**
 * A page for a sign-in that cannot go on (a bad or used link, a refused callback): what happened and
 * what to do, in the page's language; `note` is the error catalogue's English detail (what a provider
 * answered), shown under it marked as English.
 */
export function problemPage(opts: { lang: string; title: string; detail: string; note?: string }): HostedPage {
  const note = opts.note ? `<p class="hint" lang="en">${escapeHtml(opts.note)}</p>` : "";
  return hostedPage({ lang: opts.lang, title: opts.title, body: `<p class="error" role="alert">${escapeHtml(opts.detail)}</p>${note}` });
}
