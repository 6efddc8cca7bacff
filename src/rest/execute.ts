// Runs a REST route's GraphQL operation against the one schema and maps the outcome: data → the
// route's JSON, AppError → its problem document, variable coercion errors → 422 (or 400 when the
// variable came from the path or query string).
import { execute, type DocumentNode, type GraphQLError, type GraphQLSchema } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { AppError, errors, type FieldError } from "../lib/errors.js";
import type { RequestContext } from "../context.js";

export type ExecOutcome<T> = { ok: true; data: T } | { ok: false; error: AppError | GraphQLError };

const COERCION_RE = /^Variable "\$(\w+)" (?:got invalid value .*?(?: at "([^"]+)")?;\s*(.*)|of required type .* was not provided\.|of non-null type .* must not be null\.)$/s;

/** Maps a variable coercion message to a field error, `path` relative to the REST body or parameter. */
function coercionFieldError(e: GraphQLError): { variable: string; field: FieldError } | null {
  const m = COERCION_RE.exec(e.message);
  if (!m?.[1]) return null;
  const variable = m[1];
  const at = m[2] ? m[2].split(".").slice(1).join(".") : "";
  const path = at || variable;
  const message = m[3] ?? (e.message.includes("not provided") ? "is required" : "must not be null");
  return { variable, field: { path: path.replace(/^input\.?/, "") || variable, message } };
}

export function toAppError(errs: readonly GraphQLError[], paramVars: ReadonlySet<string>): AppError | null {
  const first = errs[0];
  if (!first) return null;
  if (first.originalError instanceof AppError) return paramise(first.originalError, paramVars);
  if (first instanceof AppError) return paramise(first, paramVars);
  const fields = errs.map(coercionFieldError);
  if (fields.length && fields.every((f) => f !== null)) {
    const all = fields as { variable: string; field: FieldError }[];
    return all.every((f) => paramVars.has(f.variable))
      ? errors.invalidParameter(all.map((f) => f.field))
      : errors.validation(all.map((f) => f.field));
  }
  return null;
}

/** A validation error about path/query parameters only is a 400 invalid_parameter. */
function paramise(err: AppError, paramVars: ReadonlySet<string>): AppError {
  if (err.code === "validation_failed" && err.fieldErrors?.length && err.fieldErrors.every((f) => paramVars.has(f.path.split(/[.[]/)[0]!))) {
    return errors.invalidParameter(err.fieldErrors);
  }
  return err;
}

export async function runOperation<TData, TVars extends Record<string, unknown>>(opts: {
  schema: GraphQLSchema;
  document: TypedDocumentNode<TData, TVars> | DocumentNode;
  variables: TVars;
  context: RequestContext;
}): Promise<{ data: TData | null; errors: readonly GraphQLError[] }> {
  const result = await execute({
    schema: opts.schema,
    document: opts.document as DocumentNode,
    variableValues: opts.variables,
    contextValue: opts.context,
  });
  return { data: (result.data as TData | null | undefined) ?? null, errors: result.errors ?? [] };
}
