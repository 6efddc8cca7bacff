// Passkeys on the hosted pages (contract section 29), with SimpleWebAuthn's browser bundle
// (WEBAUTHN_SCRIPT, served by static-files.ts: no inline script but each page's own, by nonce):
//  - the sign-in page's section (passkeySection, PASSKEY_SIGN_IN_SCRIPT): a field whose autocomplete
//    is `username webauthn`, so the browser offers the site's passkeys in its autofill (a conditional
//    request started when the page opens), and "Sign in with a passkey" for the browser's own dialog;
//    either ends as every method does (engagementFinish: the session to the opener);
//  - the page that adds one, GET /auth/v1/{tenantId}/passkeys/new?origin=…[&lang=…][&offer=1]
//    (addPasskeyPage). Its reader's identity is never in its URL: opened by a page of the site (the
//    thread element's "Add a passkey"), it asks its opener for it by a message to that origin alone
//    ({"type":"engagement:passkey-identity-request"}) and takes the answer
//    ({"type":"engagement:passkey-identity","token"}) from that window and origin only; opened by a
//    finished sign-in (`offer=1`: the finish pages go there when the site offers passkeys), it takes
//    the new session from its own tab's sessionStorage, where the finish left it, and closes by
//    itself when the reader has a passkey already, or says nothing within a few seconds. When one is
//    added it tells its opener ({"type":"engagement:passkey-added"}).
import { escapeHtml, hostedPage, OFFER_KEY, scriptJson, type HostedPage } from "./pages.js";
import { say, type SignInLanguage } from "./strings.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";

/** Where SimpleWebAuthn's browser bundle is served (static-files.ts). */
export const WEBAUTHN_SCRIPT = "/auth/v1/static/webauthn/simplewebauthn-browser.js";
/** The head of a page that uses it. */
export const WEBAUTHN_HEAD = `<script src="${WEBAUTHN_SCRIPT}"></script>`;

const authPath = (tenantId: string, rest: string) => `/auth/v1/${encodeURIComponent(tenantId)}${rest}`;

/** The page that adds a passkey, as a finished sign-in opens it (offer=1). */
export const passkeyOfferPath = (tenantId: string, origin: string, lang: SignInLanguage): string =>
  `${authPath(tenantId, "/passkeys/new")}?origin=${encodeURIComponent(origin)}&lang=${lang}&offer=1`;

/** A finish page's offer (passkeyOfferPath) when the tenant's signIn.methods lists passkey; else null. */
export const passkeyOffer = (tenant: Pick<Tenant, "id" | "settings">, origin: string, lang: SignInLanguage): string | null =>
  resolveSettings(tenant.settings).signIn.methods.includes("passkey") ? passkeyOfferPath(tenant.id, origin, lang) : null;

/** The sign-in page's passkey section. */
export function passkeySection(lang: SignInLanguage): string {
  const t = (k: Parameters<typeof say>[1]) => escapeHtml(say(lang, k));
  return `<section><h2 id="m-passkey">${t("passkey_heading")}</h2>
<form id="passkey-form" aria-labelledby="m-passkey">
<label for="passkey-user">${t("passkey_label")}</label><input type="text" id="passkey-user" name="username" autocomplete="username webauthn" aria-describedby="passkey-hint">
<p class="hint" id="passkey-hint">${t("passkey_hint")}</p>
<button type="submit">${t("passkey_button")}</button>
<p id="passkey-status" role="status"></p><p id="passkey-error" class="error" role="alert"></p>
</form></section>`;
}

/** The client words the passkey scripts use. */
export const passkeyClientStrings = (lang: SignInLanguage) => ({
  passkey_unsupported: say(lang, "passkey_unsupported"),
  passkey_cancelled: say(lang, "passkey_cancelled"),
  passkey_refused: say(lang, "passkey_refused"),
  passkey_added: say(lang, "passkey_added"),
});

/**
 * The sign-in page's passkey script, inside its function (BASE, O, L, S, post, trouble, fill and
 * finish are the page's): autofill armed at once, the button for the browser's dialog (which cancels
 * the autofill's request: SimpleWebAuthn keeps one ceremony at a time).
 */
export const PASSKEY_SIGN_IN_SCRIPT = `var pf=document.getElementById("passkey-form");
if(pf){var W=window.SimpleWebAuthnBrowser,pst=document.getElementById("passkey-status"),per=document.getElementById("passkey-error"),pb=pf.querySelector("button");
function pkSignIn(autofill){return post("/passkeys/authentication-options",{}).then(function(r){if(!r.ok)throw r;return r.json()}).then(function(o){
return W.startAuthentication({optionsJSON:o,useBrowserAutofill:autofill})}).then(function(c){per.textContent="";pst.textContent=S.working;return post("/passkeys/authenticate",{credential:c})}).then(function(r){
if(r.status===200)return r.json().then(function(s){pst.textContent=fill(S.signed_in_text,"name",s.reader.name);finish(s)});
pst.textContent="";per.textContent=r.status===401?S.passkey_refused:trouble(r)})}
function failed(e,autofill){if(e&&(e.name==="AbortError"||e.code==="ERROR_CEREMONY_ABORTED"))return;pst.textContent="";
if(autofill&&!(e&&typeof e.status==="number"))return;
per.textContent=e&&typeof e.status==="number"?trouble(e):e&&e.name==="NotAllowedError"?S.passkey_cancelled:S.failed}
function arm(){W.browserSupportsWebAuthnAutofill().then(function(ok){if(ok)pkSignIn(true).catch(function(e){failed(e,true)})})}
if(!W||!W.browserSupportsWebAuthn()){per.textContent=S.passkey_unsupported;pb.disabled=true}
else{arm();pf.addEventListener("submit",function(e){e.preventDefault();per.textContent="";pkSignIn(false).then(function(){},function(e){failed(e,false)})})}}`;

export interface AddPasskeyPageInput {
  lang: SignInLanguage;
  tenantId: string;
  tenantName: string;
  origin: string;
  /** opened by a finished sign-in (the session in sessionStorage) rather than by the site's page */
  offer: boolean;
}

const ADD_SCRIPT = `var W=window.SimpleWebAuthnBrowser,add=document.getElementById("passkey-add"),later=document.getElementById("passkey-later"),
st=document.getElementById("passkey-status"),er=document.getElementById("passkey-error"),token=null,options=null;
function call(path,body){return fetch(BASE+path,{method:"POST",headers:{"content-type":"application/json","x-service-identity":token},body:JSON.stringify(body),credentials:"omit"})}
function bye(){window.close()}
later.addEventListener("click",bye);
function ready(t){if(token)return;token=t;call("/passkeys/options",{}).then(function(r){if(!r.ok)throw r;return r.json()}).then(function(o){
options=o;if(OFFER&&o.excludeCredentials&&o.excludeCredentials.length)return bye();st.textContent="";add.disabled=false},function(){st.textContent="";er.textContent=S.failed})}
if(!W||!W.browserSupportsWebAuthn()){st.textContent="";er.textContent=S.passkey_unsupported;if(OFFER)setTimeout(bye,3000)}
else if(OFFER){var kept=null;try{kept=sessionStorage.getItem(KEY);sessionStorage.removeItem(KEY)}catch(e){}if(kept)ready(kept);else bye()}
else{window.addEventListener("message",function(e){var d=e.data;if(e.origin!==O||e.source!==window.opener||!d||d.type!=="engagement:passkey-identity"||typeof d.token!=="string")return;ready(d.token)});
if(window.opener){try{window.opener.postMessage({type:"engagement:passkey-identity-request"},O)}catch(e){}}}
add.addEventListener("click",function(){er.textContent="";add.disabled=true;st.textContent=S.working;
W.startRegistration({optionsJSON:options}).then(function(c){return call("/passkeys",{credential:c})}).then(function(r){
if(r.status===201){st.textContent=S.passkey_added;add.hidden=true;later.textContent=S.close;later.focus();if(window.opener){try{window.opener.postMessage({type:"engagement:passkey-added"},O)}catch(e){}}return}
st.textContent="";er.textContent=S.failed},function(e){st.textContent="";er.textContent=e&&(e.name==="NotAllowedError"||e.code==="ERROR_CEREMONY_ABORTED")?S.passkey_cancelled:S.failed}).then(function(){
if(st.textContent!==S.passkey_added){add.disabled=false;call("/passkeys/options",{}).then(function(r){return r.ok?r.json():null}).then(function(o){if(o)options=o})}})});`;

/** The page that adds a passkey (see the file's head). */
export function addPasskeyPage(input: AddPasskeyPageInput): HostedPage {
  const { lang } = input;
  const t = (k: Parameters<typeof say>[1]) => escapeHtml(say(lang, k, { site: input.tenantName }));
  const client = {
    ...passkeyClientStrings(lang),
    working: say(lang, "working"),
    failed: say(lang, "failed"),
    close: say(lang, "passkey_close"),
  };
  return hostedPage({
    lang,
    title: say(lang, "passkey_add_title"),
    head: WEBAUTHN_HEAD,
    body: `<p>${t("passkey_add_text")}</p>
<div class="actions"><button type="button" id="passkey-add" disabled>${t("passkey_add_button")}</button>
<button type="button" id="passkey-later" class="secondary">${t("passkey_not_now")}</button></div>
<p id="passkey-status" role="status">${t("passkey_waiting")}</p><p id="passkey-error" class="error" role="alert"></p>`,
    script: `(function(){var BASE=${scriptJson(authPath(input.tenantId, ""))},O=${scriptJson(input.origin)},S=${scriptJson(client)},OFFER=${input.offer ? "true" : "false"},KEY=${scriptJson(OFFER_KEY)};
${ADD_SCRIPT}})();`,
  });
}
