// Checks a REST route's variables against its operation's variable definitions before execution,
// walking the input types (graphql-js's own coerceInputValue judges each leaf), so every problem
// comes with a structured path — never by parsing an error message. Paths are relative to the REST
// body for the `input` variable (`delivery.maxAttempts`, or `body` for the whole body) and start
// with the variable's name otherwise (`limit`, `ids[2]`).
import {
  coerceInputValue,
  getNamedType,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  Kind,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import type { FieldError } from "../../lib/errors.js";

export interface VariableProblem {
  variable: string;
  field: FieldError;
}

type Path = (string | number)[];

function pathString(variable: string, path: Path): string {
  let out = variable === "input" ? "" : variable;
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out || "body";
}

function check(value: unknown, type: GraphQLInputType, path: Path, report: (path: Path, message: string) => void): void {
  if (value === null) {
    if (isNonNullType(type)) report(path, "must not be null");
    return;
  }
  const t = isNonNullType(type) ? type.ofType : type;
  if (isListType(t)) {
    if (Array.isArray(value)) value.forEach((item, i) => check(item, t.ofType, [...path, i], report));
    else check(value, t.ofType, path, report); // GraphQL accepts one value for a list
    return;
  }
  if (isInputObjectType(t)) {
    if (typeof value !== "object" || Array.isArray(value)) {
      report(path, "must be an object");
      return;
    }
    const fields = t.getFields();
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) if (!(key in fields)) report([...path, key], "is not a known field");
    for (const [name, field] of Object.entries(fields)) {
      const v = obj[name];
      if (v === undefined) {
        if (isNonNullType(field.type) && field.defaultValue === undefined) report([...path, name], "is required");
      } else check(v, field.type, [...path, name], report);
    }
    return;
  }
  coerceInputValue(value, t, (_p, _invalid, error) => report(path, error.message));
}

/** A route's document holds one operation and a few fragments: found by a scan, nothing cached. */
function operationOf(document: DocumentNode): OperationDefinitionNode {
  const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!op) throw new Error("a REST route's document has no operation");
  return op;
}

/** Every problem with the variables, or an empty list. */
export function variableProblems(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>): VariableProblem[] {
  const problems: VariableProblem[] = [];
  for (const def of operationOf(document).variableDefinitions ?? []) {
    const variable = def.variable.name.value;
    const type = typeFromAST(schema, def.type) as GraphQLInputType | undefined;
    if (!type || !getNamedType(type)) continue;
    const report = (path: Path, message: string) => problems.push({ variable, field: { path: pathString(variable, path), message } });
    const value = variables[variable];
    if (value === undefined) {
      if (isNonNullType(type) && !def.defaultValue) report([], "is required");
      continue;
    }
    check(value, type, [], report);
  }
  return problems;
}
