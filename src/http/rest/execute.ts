// Runs a REST route's GraphQL operation on the same schema and resolvers as /graphql and maps the
// outcome: data → the route's JSON, AppError → its problem document, variable problems → 422 (or
// 400 when every one is about a path or query parameter). Variables are checked first
// (./coerce.ts), so no error message is ever parsed.
//
// A REST document is fixed: it passes yoga's envelope (parse and validation, with the document
// limits and every validation rule of /graphql) once, is compiled once by graphql-jit (the
// compiler /graphql uses), and then runs as that compiled query with the request's context. The
// envelope's execution hooks have nothing to do for it: the router maps errors itself (unknown ones
// are logged and answered 500 internal_error, as masking would), a REST document has one root
// field (one unit of the rate limit, counted with the request), and graphql_operations_total is
// counted here. Skipping the envelope's per-request orchestration was about a tenth of a REST
// read's CPU. The compiled documents belong to the runner each app's router builds once.
import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema } from "graphql";
import { compileValidated, type CompiledOperation, type OperationCounter } from "../compiled-operations.js";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { YogaServerInstance } from "graphql-yoga";
import { AppError, errors } from "../../lib/errors.js";
import type { RequestContext } from "../../context/request.js";
import { knownFailure } from "../problem.js";
import { variableProblems } from "./coerce.js";
import { routeReads } from "../../context/read-routing.js";

/** The yoga server whose envelope validates REST documents (and whose schema runs them). */
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

export type RunOperation = <TData, TVars extends Record<string, unknown>>(opts: {
  document: TypedDocumentNode<TData, TVars> | DocumentNode;
  variables: TVars;
  context: RequestContext;
  paramVars: ReadonlySet<string>;
}) => Promise<{ data: TData | null; errors: readonly GraphQLError[] }>;

/**
 * What runs REST's operations for one app's router (src/http/rest/router.ts): each document is
 * validated through the envelope and compiled once, and kept here (per app) for every request.
 */
export function createOperationRunner(yoga: Yoga, countOperation: OperationCounter): RunOperation {
  /** REST documents validated through the envelope and compiled: what each request runs. */
  const prepared = new WeakMap<DocumentNode, CompiledOperation>();
  /** The schema behind the yoga server (the same for every request). */
  let schema: GraphQLSchema | undefined;

  /** Validates the document through the envelope and compiles it, once; the errors when it is invalid. */
  const prepare = (document: DocumentNode): CompiledOperation | readonly GraphQLError[] => {
    const hit = prepared.get(document);
    if (hit) return hit;
    const entry = compileValidated(yoga, document);
    if ("query" in entry) prepared.set(document, entry);
    return entry;
  };

  return async <TData, TVars extends Record<string, unknown>>(opts: {
    document: TypedDocumentNode<TData, TVars> | DocumentNode;
    variables: TVars;
    context: RequestContext;
    paramVars: ReadonlySet<string>;
  }): Promise<{ data: TData | null; errors: readonly GraphQLError[] }> => {
    const document = opts.document as DocumentNode;
    const problems = variableProblems((schema ??= yoga.getEnveloped(opts.context).schema), document, opts.variables);
    if (problems.length) {
      throw problems.every((p) => opts.paramVars.has(p.variable))
        ? errors.invalidParameter(problems.map((p) => p.field))
        : errors.validation(problems.map((p) => p.field));
    }
    const op = prepare(document);
    if (!("query" in op)) return { data: null, errors: op };
    routeReads(opts.context, op.reads);
    const result = (await op.query.query(undefined, opts.context, opts.variables)) as ExecutionResult;
    const errs = result.errors ?? [];
    countOperation(op.name, errs.length ? "error" : "ok");
    return { data: (result.data as TData | null | undefined) ?? null, errors: errs };
  };
}
