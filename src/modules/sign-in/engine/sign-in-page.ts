// The hosted sign-in page (contract section 20): GET /auth/v1/{tenantId}/sign-in?origin=…[&lang=…]
// lists the methods the tenant enabled, in this order and with these accessible names:
//  - email: a form "Email" + "Email me a link" (POST /auth/v1/{tenantId}/email, with a relay nonce
//    the page made for itself); then the popup waits on the BroadcastChannel "engagement:sign-in"
//    for the page of the link carrying that nonce to finish, and hands the session to its opener
//    (SIGN_IN_LISTEN_SCRIPT in pages.ts);
//  - guest: "Name", "Email" (or "Email (optional)"), a honeypot `website` no person sees, the ALTCHA
//    widget (the `altcha` package, served from /auth/v1/static/altcha/ under the page's CSP) and
//    "Continue as guest" (POST /auth/v1/{tenantId}/guest, then the finish script);
//  - oidc: a link "Sign in with <label>" per provider to /auth/v1/{tenantId}/oidc/{id}?origin=…&lang=…
//    (the page's language, which the callback's pages then speak);
//  - passkey: a field "Passkey" the browser's autofill offers the site's passkeys in, and "Sign in with
//    a passkey" (passkey-pages.ts).
// When the site offers passkeys, a sign-in by another method goes on to offer one (passkeyOfferPath).
// The origin was checked against allowedOrigins by the route; the page posts only to it.
import { escapeHtml, FINISH_SCRIPT, hostedPage, OFFER_SCRIPT, scriptJson, SIGN_IN_LISTEN_SCRIPT, type HostedPage } from "./pages.js";
import { passkeyClientStrings, passkeyOfferPath, passkeySection, PASSKEY_SIGN_IN_SCRIPT, WEBAUTHN_HEAD } from "./passkey-pages.js";
import { say, SIGN_IN_STRINGS, type SignInLanguage } from "./strings.js";
import type { SignInSettings } from "../../../tenancy/settings/sign-in.js";

/** Where the ALTCHA widget's files are served (src/modules/sign-in/static-files.ts). */
export const ALTCHA_BASE = "/auth/v1/static/altcha/";

export interface SignInPageInput {
  lang: SignInLanguage;
  tenantId: string;
  tenantName: string;
  origin: string;
  signIn: SignInSettings;
}

const authPath = (tenantId: string, rest: string) => `/auth/v1/${encodeURIComponent(tenantId)}${rest}`;

function emailSection(lang: SignInLanguage): string {
  const t = (k: Parameters<typeof say>[1]) => escapeHtml(say(lang, k));
  return `<section><h2 id="m-email">${t("email_heading")}</h2>
<form id="email-form" aria-labelledby="m-email">
<label for="email">${t("email_label")}</label><input type="email" id="email" name="email" autocomplete="email" required maxlength="320">
<button type="submit">${t("email_button")}</button>
<p id="email-status" role="status"></p><p id="email-error" class="error" role="alert"></p>
</form></section>`;
}

function guestSection(input: SignInPageInput): string {
  const { lang, tenantId } = input;
  const t = (k: Parameters<typeof say>[1]) => escapeHtml(say(lang, k));
  const required = input.signIn.guest.requireEmail;
  return `<section><h2 id="m-guest">${t("guest_heading")}</h2>
<form id="guest-form" aria-labelledby="m-guest">
<label for="guest-name">${t("name_label")}</label><input type="text" id="guest-name" name="name" autocomplete="nickname" required maxlength="200">
<label for="guest-email">${t(required ? "guest_email_label" : "guest_email_optional")}</label><input type="email" id="guest-email" name="email" autocomplete="email" maxlength="320" aria-describedby="guest-email-hint"${required ? " required" : ""}>
<p class="hint" id="guest-email-hint">${t("guest_email_hint")}</p>
<div class="visually-hidden" aria-hidden="true"><label for="guest-website">${t("website_label")}</label><input type="text" id="guest-website" name="website" tabindex="-1" autocomplete="off"></div>
<altcha-widget challengeurl="${escapeHtml(authPath(tenantId, "/challenge"))}" auto="onfocus" name="altcha" language="${lang}" workers="2" hidelogo></altcha-widget>
<button type="submit">${t("guest_button")}</button>
<p id="guest-status" role="status"></p><p id="guest-error" class="error" role="alert"></p>
</form></section>`;
}

function oidcSection(input: SignInPageInput): string {
  const { lang, tenantId, origin } = input;
  const links = input.signIn.oidc.map(
    (p) =>
      `<li><a class="button" href="${escapeHtml(`${authPath(tenantId, `/oidc/${encodeURIComponent(p.id)}`)}?origin=${encodeURIComponent(origin)}&lang=${lang}`)}">${escapeHtml(
        say(lang, "oidc_button", { label: p.label }),
      )}</a></li>`,
  );
  return `<section><h2 id="m-oidc">${escapeHtml(say(lang, "oidc_heading"))}</h2>
<ul class="providers">${links.join("")}</ul></section>`;
}

// The page's script: the two forms, each posting JSON to our own routes (connect-src 'self').
const SCRIPT = `var R=(function(){var b=new Uint8Array(24);crypto.getRandomValues(b);var s="";for(var i=0;i<b.length;i++)s+=("0"+b[i].toString(16)).slice(-2);return s})();
function post(path,body){return fetch(BASE+path,{method:"POST",headers:{"content-type":"application/json"},body:JSON.stringify(body),credentials:"omit"})}
function trouble(r){return r&&r.status===429?S.rate_limited:S.failed}
function fill(s,k,v){return s.split("{"+k+"}").join(v)}
function finish(s,offer){var m={type:"engagement:signed-in",token:s.token,reader:s.reader},p=offer?P:null;engagementFinish(m,O,null,!!p);if(p)engagementOffer(s.token,p)}
var ef=document.getElementById("email-form");
if(ef){ef.addEventListener("submit",function(e){e.preventDefault();
var b=ef.querySelector("button"),st=document.getElementById("email-status"),er=document.getElementById("email-error"),email=document.getElementById("email").value.trim();
er.textContent="";st.textContent=S.working;b.disabled=true;
post("/email",{email:email,origin:O,lang:L,relay:R}).then(function(r){
if(r.status===202){st.textContent=fill(S.email_sent,"email",email);engagementListen(O,R);return}
st.textContent="";er.textContent=trouble(r);b.disabled=false},function(){st.textContent="";er.textContent=S.failed;b.disabled=false})})}
var gf=document.getElementById("guest-form");
if(gf){var w=gf.querySelector("altcha-widget"),solved=null;
if(w){w.addEventListener("verified",function(e){solved=e.detail&&e.detail.payload});w.addEventListener("statechange",function(e){if(e.detail&&e.detail.state!=="verified")solved=null})}
function solve(){return new Promise(function(resolve,reject){
if(!w)return reject(new Error("no widget"));if(solved)return resolve(solved);
w.addEventListener("verified",function(e){resolve(e.detail.payload)},{once:true});
w.addEventListener("statechange",function(e){if(e.detail&&e.detail.state==="error")reject(new Error("challenge failed"))});
var s=w.getState&&w.getState();if(s!=="verifying")w.verify()})}
gf.addEventListener("submit",function(e){e.preventDefault();
var b=gf.querySelector("button[type=submit]"),st=document.getElementById("guest-status"),er=document.getElementById("guest-error");
er.textContent="";st.textContent=S.working;b.disabled=true;
var body={name:document.getElementById("guest-name").value,website:document.getElementById("guest-website").value,lang:L},
email=document.getElementById("guest-email").value.trim();if(email)body.email=email;
solve().then(function(payload){body.altcha=payload;return post("/guest",body)}).then(function(r){
if(r.status===201)return r.json().then(function(s){st.textContent=fill(S.signed_in_text,"name",s.reader.name);
finish(s,true)});
st.textContent="";er.textContent=trouble(r);b.disabled=false;solved=null;if(w&&w.reset)w.reset()}).catch(function(){
st.textContent="";er.textContent=S.failed;b.disabled=false;solved=null;if(w&&w.reset)w.reset()})})}`;

/** The sign-in page of the tenant's enabled methods, for a page of `origin`. */
export function signInPage(input: SignInPageInput): HostedPage {
  const { lang, signIn } = input;
  const passkeys = signIn.methods.includes("passkey");
  const sections = [
    signIn.methods.includes("email") ? emailSection(lang) : "",
    signIn.methods.includes("guest") ? guestSection(input) : "",
    signIn.methods.includes("oidc") && signIn.oidc.length ? oidcSection(input) : "",
    passkeys ? passkeySection(lang) : "",
  ];
  const strings = SIGN_IN_STRINGS[lang];
  const client = {
    working: strings.working,
    failed: strings.failed,
    rate_limited: strings.rate_limited,
    email_sent: strings.email_sent,
    signed_in_text: strings.signed_in_text,
    ...passkeyClientStrings(lang),
  };
  const guest = signIn.methods.includes("guest");
  const i18n = lang === "en" ? "" : `<script type="module" src="${ALTCHA_BASE}i18n/${lang}.js"></script>`;
  return hostedPage({
    lang,
    title: say(lang, "title"),
    head:
      (guest
        ? `<link rel="stylesheet" href="${ALTCHA_BASE}altcha.css"><script type="module" src="${ALTCHA_BASE}altcha.js"></script>${i18n}`
        : "") + (passkeys ? WEBAUTHN_HEAD : ""),
    body: `<p>${escapeHtml(say(lang, "intro", { site: input.tenantName }))}</p>${sections.join("\n")}`,
    script: `(function(){var BASE=${scriptJson(authPath(input.tenantId, ""))},O=${scriptJson(input.origin)},L=${scriptJson(lang)},S=${scriptJson(client)},P=${scriptJson(
      passkeys ? passkeyOfferPath(input.tenantId, input.origin, lang) : null,
    )};
${FINISH_SCRIPT}
${OFFER_SCRIPT}
${SIGN_IN_LISTEN_SCRIPT}
${SCRIPT}
${PASSKEY_SIGN_IN_SCRIPT}})();`,
  });
}
