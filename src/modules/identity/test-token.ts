// The settings' "Test token" (manage_settings; POST /api/v1/settings/identity/test-token, GraphQL
// testIdentityToken): a reader token pasted by an operator is verified exactly as a request's
// X-Service-Identity would be (verifyReaderToken: the tenant's identity providers for a token signed
// with a public key, the tenant's HS256 secrets otherwise), and the answer shows the reader it stands
// for, or the invalid_identity reason, beside the decoded header and claims (decoded, not trusted).
import { decodeJwt, decodeProtectedHeader } from "jose";
import { loadTenant, verifyReaderToken, type RequestContext } from "../../context/request.js";
import { AppError, errors } from "../../lib/errors.js";

/** A JWT is three base64url parts; 16 KiB is far more than any IdP's token. */
const MAX_TOKEN_LENGTH = 16_384;

export interface TestedReader {
  id: string;
  name: string;
  avatarUrl: string | null;
  email: string | null;
  emailVerified: boolean;
}

export interface TokenTestResult {
  /** the token would be accepted now */
  ok: boolean;
  /** who it stands for, when accepted */
  reader: TestedReader | null;
  /** the invalid_identity reason, when refused */
  error: string | null;
  /** the decoded payload (whether or not it verifies); null when the token is not a JWT */
  claims: Record<string, unknown> | null;
  header: { alg: string | null; kid: string | null } | null;
}

function decoded(token: string): Pick<TokenTestResult, "claims" | "header"> {
  let header: TokenTestResult["header"] = null;
  let claims: TokenTestResult["claims"] = null;
  try {
    const h = decodeProtectedHeader(token);
    header = { alg: typeof h.alg === "string" ? h.alg : null, kid: typeof h.kid === "string" ? h.kid : null };
  } catch {
    header = null;
  }
  try {
    claims = { ...decodeJwt(token) };
  } catch {
    claims = null;
  }
  return { claims, header };
}

export async function testIdentityToken(ctx: RequestContext, token: string): Promise<TokenTestResult> {
  const trimmed = token.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_TOKEN_LENGTH) {
    throw errors.validation([{ path: "token", message: `must be a JWT of 1–${MAX_TOKEN_LENGTH} characters` }]);
  }
  const tenant = await loadTenant(ctx);
  const { claims, header } = decoded(trimmed);
  try {
    const r = await verifyReaderToken(ctx.app, tenant, trimmed);
    const reader: TestedReader = {
      id: r.id,
      name: r.name,
      avatarUrl: r.avatarUrl,
      email: r.email ?? null,
      // an assertion's address is vouched for by the tenant's backend that signed it
      emailVerified: "emailVerified" in r ? r.emailVerified : r.email != null,
    };
    return { ok: true, reader, error: null, claims, header };
  } catch (err) {
    // only a refusal of the token is an answer; anything else (a key that opens no secret) stays an error
    if (err instanceof AppError && err.code === "invalid_identity") return { ok: false, reader: null, error: err.detail, claims, header };
    throw err;
  }
}
