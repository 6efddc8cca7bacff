// The signed-in reader's own account (contract section 20): GET /me says who X-Service-Identity
// stands for and how they signed in; a hosted session's reader may rename themselves (PATCH /me) and
// sign out (POST /me/sign-out: the session is refused everywhere at once). A reader the site's own
// sign-in asserts is named by the site, which also signs them out: both answer 409 not_a_session.
import { requireReader, store, type RequestContext } from "../../context/request.js";
import { isProviderToken } from "../../auth/identity-providers.js";
import { endSession, isSessionToken, renameSessionReader, type SessionReader } from "../../auth/reader-sessions.js";
import { errors } from "../../lib/errors.js";

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

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export async function updateMe(ctx: RequestContext, input: { name?: unknown }): Promise<Me> {
  const me = await sessionReader(ctx);
  const name = typeof input.name === "string" ? input.name.trim() : input.name;
  if (typeof name !== "string" || name.length === 0 || name.length > 200 || CONTROL.test(name)) {
    throw errors.validation([{ path: "name", message: "must be 1–200 characters without control characters" }]);
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
