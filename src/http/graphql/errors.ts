// What /graphql answers for an error, and with which code. Three kinds of request error:
//   bad_request        the HTTP request is not a well-formed GraphQL request (body, batch, params
//                      that are not JSON; 405 for a GET mutation): 400 under either media type
// and, 400 under `application/graphql-response+json` (GraphQL over HTTP) but 200 under
// `application/json`:
//   syntax_error, invalid_query, unknown_operation, query_too_complex
//                      the document: it does not parse, fails validation (unknown fields, literal
//                      arguments of the wrong type or out of range, introspection where it is off),
//                      names no operation, or is over a limit (limits.ts)
//   invalid_parameter  the variables' values: wrong type, missing or null where required, an Int
//                      out of range, unknown or misplaced input fields (graphql-js's coercion)
// Errors of ours (AppError) keep theirs; anything else is internal_error, logged at error level.
// Request errors are the caller's and are not logged (the access log has the request).
import { GraphQLError, getOperationAST, getVariableValues, type ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import { AppError } from "../../lib/errors.js";
import { knownFailure } from "../problem.js";

/** graphql-yoga's request-error codes → ours (the HTTP status yoga chose stays). */
const YOGA_CODES: Record<string, string> = {
  BAD_REQUEST: "bad_request",
  GRAPHQL_PARSE_FAILED: "syntax_error",
  GRAPHQL_VALIDATION_FAILED: "invalid_query",
  OPERATION_RESOLUTION_FAILURE: "unknown_operation",
  PERSISTED_QUERY_NOT_FOUND: "bad_request",
};

/** A request error of ours: the code, and 400 under GraphQL over HTTP's own media type. */
function requestError(code: string, from: GraphQLError): AppError {
  const err = new AppError(400, code, from.message, { extra: { http: { status: 400, spec: true } } });
  // where in the document, as the error it replaces says (AppError's constructor takes no nodes; yoga
  // rebuilds each error from nodes, source and positions when it writes the answer)
  const { nodes, source, positions, locations } = from;
  return Object.assign(err, { nodes, source, positions, locations });
}

const isIterable = (v: unknown): v is AsyncIterable<unknown> => typeof v === "object" && v !== null && Symbol.asyncIterator in v;

/**
 * A result without `data` was refused before execution began (the GraphQL spec's request error);
 * once a document is valid and its operation chosen, only the variables' values can do that. Their
 * problems are judged again by graphql-js's reference coercion — which graphql-jit's, the direct
 * path's pre-check and the subscription executor follow — and answered as invalid_parameter with
 * graphql-js's messages and locations, whichever executor refused. Runs on error answers only.
 */
function variableErrors(args: {
  schema: Parameters<typeof getVariableValues>[0];
  document: Parameters<typeof getOperationAST>[0];
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}): AppError[] | null {
  const op = getOperationAST(args.document, args.operationName ?? undefined);
  if (!op?.variableDefinitions?.length) return null;
  const raw = args.variableValues;
  const { errors } = getVariableValues(args.schema, op.variableDefinitions, raw && typeof raw === "object" ? raw : {});
  return errors?.length ? errors.map((e) => requestError("invalid_parameter", e)) : null;
}

function refusedBeforeExecution(result: unknown): result is ExecutionResult {
  if (isIterable(result)) return false;
  const r = result as ExecutionResult;
  return !!r.errors?.length && !("data" in r) && !r.errors.every((e) => e instanceof AppError);
}

/** Variable problems answered as invalid_parameter, for queries, mutations and subscriptions. */
export function useRequestErrorCodes(): Plugin {
  type Args = Parameters<typeof variableErrors>[0];
  const recode = (args: Args, result: unknown, setResult: (r: ExecutionResult) => void) => {
    if (!refusedBeforeExecution(result)) return;
    const errors = variableErrors(args);
    if (errors) setResult({ ...result, errors });
  };
  // one hooks object for every execution: nothing is allocated on the success path
  const onExecuteDone = {
    onExecuteDone: ({ args, result, setResult }: { args: Args; result: unknown; setResult: (r: ExecutionResult) => void }) =>
      recode(args, result, setResult),
  };
  return {
    onExecute: () => onExecuteDone,
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => recode(args as Args, result, setResult),
    }),
  };
}

/**
 * yoga's maskError: which error the caller sees. Never throws, whatever it is given (graphql-jit's
 * errors carry no `extensions`; a thrown value may be anything).
 */
export function maskGraphQLError(log: Logger): (error: unknown, message: string) => Error {
  return (error, message) => {
    const original = error instanceof GraphQLError ? error.originalError : undefined;
    if (error instanceof AppError || original instanceof AppError) return error as Error;
    const known = knownFailure(original);
    if (known) return known;
    if (error instanceof GraphQLError) {
      const theirs = error.extensions?.code;
      // graphql-yoga's own request errors (bad body, syntax, validation, GET mutation): keep their
      // message and HTTP status, give them our code; they are the client's, not ours to log
      const code = typeof theirs === "string" ? YOGA_CODES[theirs] : undefined;
      if (code) return new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, code } });
      // raised by graphql-js itself, not thrown by a resolver: before execution (no path) it is the
      // request's; during it (a non-null field resolved to null) the message names the field
      if (theirs === undefined && !original) return error.path ? error : requestError("invalid_parameter", error);
    }
    // a bare SyntaxError was thrown outside execution (a resolver's would be wrapped): yoga's GET
    // parser reading `variables` or `extensions` that are not JSON. The request's, and malformed: 400
    if (error instanceof SyntaxError) {
      return new AppError(400, "bad_request", `The variables or extensions parameter is not valid JSON: ${error.message}`, {
        extra: { http: { status: 400 } },
      });
    }
    log.error({ err: original ?? error }, "graphql resolver error");
    return new AppError(500, "internal_error", message);
  };
}
