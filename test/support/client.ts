// A small HTTP client for tests: REST calls and typed GraphQL operations, over real HTTP.
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { checkResponse } from "./openapi-check.js";

export interface Creds {
  key?: string;
  admin?: string;
  identity?: string;
  headers?: Record<string, string>;
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

function authHeaders(c: Creds = {}): Record<string, string> {
  return {
    ...(c.key ? { "x-api-key": c.key } : {}),
    ...(c.admin ? { authorization: `Bearer ${c.admin}` } : {}),
    ...(c.identity ? { "x-service-identity": c.identity } : {}),
    ...(c.headers ?? {}),
  };
}

export function client(baseUrl: string, creds: Creds = {}) {
  const call = async <T = any>(method: string, path: string, body?: unknown, extra: Creds = {}): Promise<Res<T>> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...authHeaders({ ...creds, ...extra, headers: { ...creds.headers, ...extra.headers } }),
      },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    // every REST answer must be what the OpenAPI document says (test/support/openapi-check.ts)
    checkResponse(method, `${baseUrl}${path}`, res.status, res.headers.get("content-type"), parsed);
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
  return {
    get: <T = any>(p: string, extra?: Creds) => call<T>("GET", p, undefined, extra),
    post: <T = any>(p: string, body?: unknown, extra?: Creds) => call<T>("POST", p, body, extra),
    put: <T = any>(p: string, body?: unknown, extra?: Creds) => call<T>("PUT", p, body, extra),
    patch: <T = any>(p: string, body?: unknown, extra?: Creds) => call<T>("PATCH", p, body, extra),
    del: <T = any>(p: string, extra?: Creds) => call<T>("DELETE", p, undefined, extra),
    raw: call,
    /** A typed GraphQL operation over HTTP POST /graphql. */
    gql: async <TData, TVars>(
      doc: TypedDocumentNode<TData, TVars>,
      variables?: TVars,
      extra?: Creds,
    ): Promise<{ status: number; data: TData | null; errors?: { message: string; extensions?: Record<string, any> }[] }> => {
      const r = await call("POST", "/graphql", { query: print(doc), variables }, extra);
      return { status: r.status, data: r.body?.data ?? null, errors: r.body?.errors };
    },
  };
}

export type Client = ReturnType<typeof client>;
