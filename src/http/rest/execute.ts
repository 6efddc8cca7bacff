// Runs a REST route's GraphQL operation through yoga's envelope — the same plugins as /graphql
// (error masking, limits, metrics) — and maps the outcome: data → the route's JSON, AppError → its
// problem document, variable problems → 422 (or 400 when every one is about a path or query
// parameter). Variables are checked first (./coerce.ts), so no error message is ever parsed.
import type { DocumentNode, ExecutionResult, GraphQLError } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { YogaServerInstance } from "graphql-yoga";
import { AppError, errors } from "../../lib/errors.js";
import type { RequestContext } from "../../context/request.js";
import { knownFailure } from "../problem.js";
import { variableProblems } from "./coerce.js";

/** The yoga server REST runs through (its envelope: parse/validate/execute with every plugin). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- yoga's server context type does not matter here
export type Yoga = YogaServerInstance<any, RequestContext>;

export function toAppError(errs: readonly GraphQLError[], paramVars: ReadonlySet<string>): AppError | null {
  const first = errs[0];
  if (!first) return null;
  if (first.originalError instanceof AppError) return paramise(first.originalError, paramVars);
  if (first instanceof AppError) return paramise(first, paramVars);
  for (const e of errs) {
    const known = e.originalError ? knownFailure(e.originalError) : null;
    if (known) return known;
  }
  return null;
}

/** A validation error about path/query parameters only is a 400 invalid_parameter. */
function paramise(err: AppError, paramVars: ReadonlySet<string>): AppError {
  if (
    err.code === "validation_failed" &&
    err.fieldErrors?.length &&
    err.fieldErrors.every((f) => paramVars.has(f.path.split(/[.[]/)[0]!))
  ) {
    return errors.invalidParameter(err.fieldErrors);
  }
  return err;
}

/** Documents that passed the envelope's validation once (REST documents are fixed). */
const validated = new WeakSet<DocumentNode>();

export async function runOperation<TData, TVars extends Record<string, unknown>>(opts: {
  yoga: Yoga;
  document: TypedDocumentNode<TData, TVars> | DocumentNode;
  variables: TVars;
  context: RequestContext;
  paramVars: ReadonlySet<string>;
}): Promise<{ data: TData | null; errors: readonly GraphQLError[] }> {
  const document = opts.document as DocumentNode;
  const { schema, validate, execute, contextFactory } = opts.yoga.getEnveloped(opts.context);
  const problems = variableProblems(schema, document, opts.variables);
  if (problems.length) {
    throw problems.every((p) => opts.paramVars.has(p.variable))
      ? errors.invalidParameter(problems.map((p) => p.field))
      : errors.validation(problems.map((p) => p.field));
  }
  if (!validated.has(document)) {
    const invalid = validate(schema, document);
    if (invalid.length) return { data: null, errors: invalid };
    validated.add(document);
  }
  const result = (await execute({
    schema,
    document,
    variableValues: opts.variables,
    contextValue: await contextFactory(),
  })) as ExecutionResult;
  return { data: (result.data as TData | null | undefined) ?? null, errors: result.errors ?? [] };
}
