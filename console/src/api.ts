// The console talks to the service like any client: GraphQL at /graphql with its session cookie
// (same origin) and the session's CSRF token in X-CSRF-Token. Errors become readable messages.
import { createClient, type Client } from "graphql-sse";
import type { TypedDocumentString } from "./gql/graphql";

export interface Session {
  tenantId: string;
  /** the tenant's name, shown before its id */
  tenantName?: string | null;
  operator: { id: string; email: string; role: "owner" | "moderator" };
  csrfToken: string;
}

export interface FieldError {
  path: string;
  message: string;
}

/** An API refusal: its message is meant for people; `fields` name the inputs it is about. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
  }
}

let csrf = "";

export async function loadSession(): Promise<Session | null> {
  const r = await fetch("/console/auth/session", { credentials: "same-origin" });
  if (r.status === 401) return null;
  if (!r.ok) throw new ApiError(`The service answered ${r.status}.`, "unavailable");
  const s = (await r.json()) as Session;
  csrf = s.csrfToken;
  return s;
}

export async function signIn(tenantId: string, email: string, password: string): Promise<Session> {
  const r = await fetch("/console/auth/sign-in", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tenantId, email, password }),
  });
  const body = (await r.json()) as Session & { detail?: string; code?: string };
  if (!r.ok) throw new ApiError(body.detail ?? "Sign-in failed.", body.code ?? "error");
  csrf = body.csrfToken;
  return body;
}

/** Signs in with a passkey's assertion (console/src/passkeys.ts makes it): the session, as signIn answers it. */
export async function passkeySignIn(credential: unknown): Promise<Session> {
  const s = await send<Session>("POST", "/console/auth/passkeys/authenticate", { credential });
  csrf = s!.csrfToken;
  return s!;
}

export async function signOut(): Promise<void> {
  await fetch("/console/auth/sign-out", { method: "POST", credentials: "same-origin", headers: { "x-csrf-token": csrf } });
  csrf = "";
}

/** Requests in flight (the browser tests wait for 0 before looking at a screen). */
const w = window as unknown as { __inflight: number };
w.__inflight = 0;

/**
 * The last X-Service-Consistency a write's answer carried, sent with every later request: the
 * console's reads see its own writes even when a read replica serves them (contract section 26).
 */
let consistency: string | null = null;
const consistencyHeader = (): Record<string, string> => (consistency ? { "x-service-consistency": consistency } : {});
const noteConsistency = (r: Response) => void (consistency = r.headers.get("x-service-consistency") ?? consistency);

export async function gql<TResult, TVariables>(doc: TypedDocumentString<TResult, TVariables>, variables?: TVariables): Promise<TResult> {
  w.__inflight++;
  try {
    return await request(doc, variables);
  } finally {
    w.__inflight--;
  }
}

async function request<TResult, TVariables>(doc: TypedDocumentString<TResult, TVariables>, variables?: TVariables): Promise<TResult> {
  let r: Response;
  try {
    r = await fetch("/graphql", {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "content-type": "application/json",
        accept: "application/graphql-response+json, application/json",
        "x-csrf-token": csrf,
        ...consistencyHeader(),
      },
      body: JSON.stringify({ query: doc.toString(), variables: variables ?? {} }),
    });
  } catch {
    throw new ApiError("The service cannot be reached. Check your connection and try again.", "network");
  }
  noteConsistency(r);
  const body = (await r.json().catch(() => null)) as {
    data?: TResult;
    errors?: { message: string; extensions?: { code?: string; errors?: FieldError[] } }[];
  } | null;
  const e = body?.errors?.[0];
  if (e) throw new ApiError(e.message, e.extensions?.code ?? "error", e.extensions?.errors ?? []);
  if (!body?.data) throw new ApiError(`The service answered ${r.status}.`, "unavailable");
  return body.data;
}

/**
 * A REST call whose body is not JSON (a file upload) or whose answer is read as JSON: the session
 * cookie and CSRF header like every other call; a problem document becomes an ApiError.
 */
export async function rest<T>(method: "GET" | "POST", path: string, body?: Blob): Promise<T> {
  w.__inflight++;
  try {
    let r: Response;
    try {
      r = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: {
          accept: "application/json",
          "x-csrf-token": csrf,
          ...consistencyHeader(),
          ...(body ? { "content-type": "application/octet-stream" } : {}),
        },
        ...(body ? { body } : {}),
      });
    } catch {
      throw new ApiError("The service cannot be reached. Check your connection and try again.", "network");
    }
    noteConsistency(r);
    const parsed = (await r.json().catch(() => null)) as (T & { detail?: string; code?: string; errors?: FieldError[] }) | null;
    if (!r.ok) throw new ApiError(parsed?.detail ?? `The service answered ${r.status}.`, parsed?.code ?? "error", parsed?.errors ?? []);
    if (parsed === null) throw new ApiError(`The service answered ${r.status} without a body.`, "unavailable");
    return parsed;
  } finally {
    w.__inflight--;
  }
}

/**
 * A JSON call to a plain route (the console's own under /console/auth): the session cookie and CSRF
 * header; the answer's JSON, or null for 204; a problem document becomes an ApiError.
 */
export async function send<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T | null> {
  w.__inflight++;
  try {
    let r: Response;
    try {
      r = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: {
          accept: "application/json",
          "x-csrf-token": csrf,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError("The service cannot be reached. Check your connection and try again.", "network");
    }
    if (r.status === 204) return null;
    const parsed = (await r.json().catch(() => null)) as (T & { detail?: string; code?: string; errors?: FieldError[] }) | null;
    if (!r.ok) throw new ApiError(parsed?.detail ?? `The service answered ${r.status}.`, parsed?.code ?? "error", parsed?.errors ?? []);
    if (parsed === null) throw new ApiError(`The service answered ${r.status} without a body.`, "unavailable");
    return parsed;
  } finally {
    w.__inflight--;
  }
}

let sse: Client | undefined;

/** A GraphQL subscription over graphql-sse (single connection, same origin, CSRF header). */
/** Subscribes over graphql-sse; `onReconnected` runs when the stream comes back after a break (what it missed is the
 * caller's to fetch again). */
export function subscribe<TResult>(
  doc: TypedDocumentString<TResult, Record<string, never>>,
  onData: (d: TResult) => void,
  onReconnected?: () => void,
): () => void {
  sse ??= createClient({
    url: "/graphql/stream",
    headers: () => ({ "x-csrf-token": csrf }),
    credentials: "same-origin",
    retryAttempts: 1000,
  });
  return sse.subscribe<TResult>(
    { query: doc.toString() },
    {
      next: (r) => r.data && onData(r.data as TResult),
      error: () => undefined,
      complete: () => undefined,
    },
    { connected: (reconnected) => reconnected && onReconnected?.() },
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");
