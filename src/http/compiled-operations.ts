// GraphQL operations run without the envelope's per-request execution hooks: REST's fixed documents
// (src/http/rest/execute.ts) and a backend's simple /graphql queries (src/http/graphql/direct.ts).
// Both are validated through yoga's envelope (document limits, every validation rule) and compiled
// by graphql-jit once each, here; both count graphql_operations_total as the envelope's metrics
// plugin does, with the same counter. Which operations are compiled is kept by each path, per app.
import { getOperationAST, type DocumentNode, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import type { YogaServerInstance } from "graphql-yoga";
import type { AppServices } from "../context/request.js";
import { readsOfOperation, type ReadsFrom } from "./database-routes.js";

export interface CompiledOperation {
  query: CompiledQuery;
  /** for graphql_operations_total: the operation's name, or "anonymous" */
  name: string;
  /** the operation the document and name select (null when they select none) */
  operation: OperationDefinitionNode | null;
  schema: GraphQLSchema;
  /** where its reads go (src/http/database-routes.ts) */
  reads: ReadsFrom;
}

/** Validates the document through the envelope and compiles it; the errors when it is invalid. */
export function compileValidated(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any server and user context: only the envelope's schema and validate are used
  yoga: YogaServerInstance<any, any>,
  document: DocumentNode,
  operationName?: string,
): CompiledOperation | readonly GraphQLError[] {
  const { validate, schema } = yoga.getEnveloped({});
  const invalid = validate(schema, document);
  if (invalid.length) return invalid;
  const query = compileQuery(schema, document, operationName);
  if (!isCompiledQuery(query)) return query.errors ?? [];
  const operation = getOperationAST(document, operationName);
  return {
    query,
    name: operationName ?? operation?.name?.value ?? "anonymous",
    operation: operation ?? null,
    schema,
    reads: readsOfOperation(operation, document),
  };
}

export type OperationCounter = (name: string, outcome: "ok" | "error") => void;

/**
 * graphql_operations_total by operation name (at most 200 distinct names; the rest count as
 * "other"). Built once per app (src/app.ts) and shared by its yoga server, direct path and REST.
 */
export function createOperationCounter(metrics: AppServices["metrics"]): OperationCounter {
  const names = new Set<string>();
  return (name, outcome) => {
    if (!names.has(name)) {
      if (names.size < 200) names.add(name);
      else name = "other";
    }
    metrics.graphqlOperations.inc({ operation: name, outcome });
  };
}
