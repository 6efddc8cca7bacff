// The signed-in reader's own account (contract section 20): GET /me says who X-Service-Identity
// stands for and how they signed in; a hosted session's reader may rename themselves (PATCH /me) and
// sign out (POST /me/sign-out: the session is refused everywhere at once); any reader lists and
// removes their passkeys (contract section 29). A reader the site's own
// sign-in asserts is named by the site, which also signs them out: both answer 409 not_a_session.
import { requireReader, store, type RequestContext } from "../../context/request.js";
import { isProviderToken } from "../../auth/identity-providers.js";
import { endSession, isSessionToken, renameSessionReader, type SessionReader } from "../../auth/reader-sessions.js";
import { errors } from "../../lib/errors.js";
import { isReaderName, READER_NAME_RULE } from "../../lib/reader-name.js";
import { deletePasskey, listPasskeys, type Passkey } from "./engine/passkeys.js";

/** How the reader of X-Service-Identity signed in: a hosted method, or the site's own (assertion | provider). */
export type MeMethod = SessionReader["method"] | "assertion" | "provider";

export interface Me {
  id: string;
  name: string;
  avatarUrl: string | null;
  method: MeMethod;
}

export async function getMe(ctx: RequestContext): Promise<Me> {
  const reader = await requireReader(ctx);
  const token = ctx.identityToken!;
  const method: MeMethod = "method" in reader ? (reader as SessionReader).method : isProviderToken(token) ? "provider" : "assertion";
  return { id: reader.id, name: reader.name, avatarUrl: reader.avatarUrl, method };
}

export async function updateMe(ctx: RequestContext, input: { name?: unknown }): Promise<Me> {
  const me = await sessionReader(ctx);
  const name = typeof input.name === "string" ? input.name.trim() : input.name;
  if (!isReaderName(name)) {
    throw errors.validation([{ path: "name", message: READER_NAME_RULE }]);
  }
  await renameSessionReader(store(ctx), ctx.app.clock, me.id, name);
  return { ...me, name };
}

export async function signOut(ctx: RequestContext): Promise<void> {
  await sessionReader(ctx);
  await endSession(store(ctx), ctx.identityToken!);
  delete ctx.cache.reader;
}

async function sessionReader(ctx: RequestContext): Promise<Me> {
  const me = await getMe(ctx);
  if (!isSessionToken(ctx.identityToken!)) throw errors.notASession();
  return me;
}

/** The reader's passkeys (GET /api/v1/me/passkeys), whatever identity names them. */
export async function myPasskeys(ctx: RequestContext): Promise<Passkey[]> {
  const reader = await requireReader(ctx);
  return listPasskeys(store(ctx), reader.id);
}

/** Removes one of the reader's passkeys (DELETE /api/v1/me/passkeys/{id}); 404 when it is not theirs. */
export async function removeMyPasskey(ctx: RequestContext, id: string): Promise<void> {
  const reader = await requireReader(ctx);
  await deletePasskey(store(ctx), reader.id, id);
}
