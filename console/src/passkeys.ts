// Passkeys in the console (contract section 29; the routes: src/modules/console/engine/passkey-routes.ts),
// with SimpleWebAuthn's browser library bundled into the console (nothing from a CDN): an operator
// adds one on "Your account" (screens/account.tsx) and signs in with it on the sign-in page, by the
// button (the browser's own dialog) or from the Email field's autofill (a conditional request, armed
// while the page shows: the browser offers the service's passkeys there). SimpleWebAuthn keeps one
// ceremony at a time: the button cancels the autofill's request, and leaving the page cancels both.
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/browser";
import { ApiError, passkeySignIn, send, type Session } from "./api";

/** A passkey as its operator sees it (GET /console/auth/passkeys). */
export interface Passkey {
  id: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export const passkeysSupported = (): boolean => browserSupportsWebAuthn();

/** The browser's refusal as an ApiError: `aborted` (another ceremony took over: nothing to say), else a sentence. */
function browserRefusal(err: unknown, adding: boolean): ApiError {
  const e = err as { name?: string; code?: string } | null;
  if (e?.code === "ERROR_CEREMONY_ABORTED" || e?.name === "AbortError")
    return new ApiError("The passkey request was cancelled.", "aborted");
  if (adding && (e?.code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED" || e?.name === "InvalidStateError"))
    return new ApiError("This device already holds one of your passkeys for this console.", "passkey_exists");
  if (e?.name === "NotAllowedError" || e?.code === "ERROR_PASSTHROUGH_SEE_CAUSE_PROPERTY")
    return new ApiError("No passkey was used: the browser's request was closed or timed out. Try again.", "cancelled");
  return new ApiError("The browser could not use a passkey here. Try again, or sign in another way.", "passkey_unusable");
}

/** Signs in with a passkey: the browser's dialog, or (autofill) the suggestions of the field whose autocomplete names webauthn. */
export async function signInWithPasskey(autofill: boolean): Promise<Session> {
  const optionsJSON = (await send<PublicKeyCredentialRequestOptionsJSON>("POST", "/console/auth/passkeys/authentication-options", {}))!;
  let credential;
  try {
    credential = await startAuthentication({ optionsJSON, useBrowserAutofill: autofill });
  } catch (err) {
    throw browserRefusal(err, false);
  }
  return passkeySignIn(credential);
}

/**
 * Arms the autofill's sign-in while the sign-in page shows (when the browser offers passkeys in
 * autofill): `onSignedIn` with the session, `onRefused` when the service refused the passkey picked
 * (or the address's tries are spent). Returns what disarms it.
 */
export function armPasskeyAutofill(onSignedIn: (s: Session) => void, onRefused: (e: ApiError) => void): () => void {
  let live = true;
  void browserSupportsWebAuthnAutofill().then((ok) => {
    if (!ok || !live) return;
    signInWithPasskey(true).then(
      (s) => live && onSignedIn(s),
      (e: unknown) => {
        // only the service's word on the passkey picked: the browser's cancellations, its closing of the
        // list and an instance without passkeys are no news before anyone asked (the button says them)
        if (live && e instanceof ApiError && (e.code === "passkey_refused" || e.code === "rate_limited")) onRefused(e);
      },
    );
  });
  return () => {
    live = false;
    WebAuthnAbortService.cancelCeremony();
  };
}

/** The operator's passkeys, newest first. */
export const listPasskeys = async (): Promise<Passkey[]> => (await send<{ items: Passkey[] }>("GET", "/console/auth/passkeys"))!.items;

/** Adds a passkey for the operator (the browser's dialog makes it); `label` optional. */
export async function addPasskey(label: string): Promise<Passkey> {
  const optionsJSON = (await send<PublicKeyCredentialCreationOptionsJSON>("POST", "/console/auth/passkeys/options", {}))!;
  let credential;
  try {
    credential = await startRegistration({ optionsJSON });
  } catch (err) {
    throw browserRefusal(err, true);
  }
  return (await send<Passkey>("POST", "/console/auth/passkeys", { credential, ...(label.trim() ? { label: label.trim() } : {}) }))!;
}

export const removePasskey = async (id: string): Promise<void> =>
  void (await send("DELETE", `/console/auth/passkeys/${encodeURIComponent(id)}`));
