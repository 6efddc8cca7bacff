// Runs a REST route's GraphQL operation against the one schema and maps the outcome: data → the
// route's JSON, AppError → its problem document, variable coercion errors → 422 (or 400 when the
// variable came from the path or query string).
import { execute, type DocumentNode, type GraphQLError, type GraphQLSchema } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { AppError, errors, type FieldError } from "../../lib/errors.js";
import type { RequestContext } from "../../context/request.js";
import { knownFailure } from "../problem.js";

export type ExecOutcome<T> = { ok: true; data: T } | { ok: false; error: AppError | GraphQLError };

const COERCION_RE = /^Variable "\$(\w+)" (?:got invalid value .*?(?: at "([^"]+)")?;\s*(.*)|of required type .* was not provided\.|of non-null type .* must not be null\.)$/s;
/** Object-level problems name the field in the message: unknown fields and missing required ones. */
const FIELD_RE = /^Field "([^"]+)" (?:(is not defined by type)|of required type "[^"]*" was not provided)/;

/**
 * Maps a variable coercion message to a field error with `path` relative to the REST body (the
 * `input` variable) or naming the parameter: `Variable "$input" got invalid value {...} at
 * "input.delivery"; Field "bogus" is not defined…` → `delivery.bogus`.
 */
function coercionFieldError(e: GraphQLError): { variable: string; field: FieldError } | null {
  const m = COERCION_RE.exec(e.message);
  if (!m?.[1]) return null;
  const variable = m[1];
  // the path below the variable: "input.delivery.maxAttempts" → ".delivery.maxAttempts", "ids[2]" → "[2]"
  let below = m[2]?.startsWith(variable) ? m[2].slice(variable.length) : "";
  let message = m[3] ?? (e.message.includes("not provided") ? "is required" : "must not be null");
  const f = FIELD_RE.exec(message);
  if (f?.[1]) {
    below = `${below}.${f[1]}`;
    message = f[2] ? "is not a known field" : "is required";
  }
  const path = variable === "input" ? below.replace(/^\./, "") || "body" : `${variable}${below}`;
  return { variable, field: { path, message } };
}

export function toAppError(errs: readonly GraphQLError[], paramVars: ReadonlySet<string>): AppError | null {
  const first = errs[0];
  if (!first) return null;
  if (first.originalError instanceof AppError) return paramise(first.originalError, paramVars);
  if (first instanceof AppError) return paramise(first, paramVars);
  for (const e of errs) {
    const known = e.originalError ? knownFailure(e.originalError) : null;
    if (known) return known;
  }
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
