// Limits on GraphQL documents, for /graphql and REST alike (REST documents pass the same envelope):
// tokens (at parse, so pathological nesting never reaches the recursive parts of graphql-js), depth,
// aliases, directives, and a cost that multiplies list sizes through nesting — `limit`/`first`
// arguments count as given, or as the largest page when they come from a variable. Over a limit →
// refused before execution with `query_too_complex` (HTTP 400 for application/graphql-response+json).
//
// Introspection (where it is on): inside `__schema`/`__type`, a chain of `ofType` — a type
// reference unwrapped one list or non-null at a time, a single object per step, never a list — is
// measured on its own: the chain counts as one level of the path's depth, and the chain itself may
// be at most `maxDepth` long. So graphql-js's getIntrospectionQuery (TypeRef: 9 nested `ofType`
// below `__schema { types { fields { args { type` …) and the queries GraphiQL, graphql-codegen and
// schema registries send pass, while a deeper `ofType` chain is still refused, as is everything
// else over a limit (aliases, tokens, directives, cost and the depth of the rest). What fans out in
// introspection — `fields`, `inputFields`, `interfaces`, `possibleTypes` re-entering `__Type` — is
// refused three deep by graphql-js's own MaxIntrospectionDepthRule (a specified validation rule).
import {
  Kind,
  Lexer,
  Source,
  TokenKind,
  parse,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
  type DocumentNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { MAX_LIMIT } from "../../lib/pagination.js";
import { AppError } from "../../lib/errors.js";

export interface GraphQLLimits {
  maxTokens: number;
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  maxCost: number;
}

export const DEFAULT_GRAPHQL_LIMITS: GraphQLLimits = { maxTokens: 2_000, maxDepth: 10, maxAliases: 30, maxDirectives: 20, maxCost: 5_400 };

export const tooComplex = (message: string) =>
  new AppError(400, "query_too_complex", message, { extra: { http: { status: 400, spec: true } } });

const LIST_SIZE_ARGS = new Set(["limit", "first", "last"]);

function listSize(field: FieldNode): number {
  for (const arg of field.arguments ?? []) {
    if (!LIST_SIZE_ARGS.has(arg.name.value)) continue;
    const v: ValueNode = arg.value;
    if (v.kind === Kind.INT) return Math.max(1, Math.min(Number(v.value), MAX_LIMIT));
    return MAX_LIMIT; // a variable: the most a page may hold
  }
  return 1;
}

interface Measure {
  depth: number;
  cost: number;
  aliases: number;
  directives: number;
  /** the longest `ofType` chain inside `__schema`/`__type` */
  typeRefDepth: number;
}

/** Where a selection set is: inside introspection, and how many `ofType` lead to it there. */
interface Within {
  introspection: boolean;
  ofTypeRun: number;
}

const OUTSIDE: Within = { introspection: false, ofTypeRun: 0 };

function measure(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen: Set<string>, within = OUTSIDE): Measure {
  const m: Measure = { depth: 0, cost: 0, aliases: 0, directives: 0, typeRefDepth: within.ofTypeRun };
  for (const sel of set.selections) {
    m.directives += sel.directives?.length ?? 0;
    let child: Measure | null = null;
    let depthAdd = 0;
    if (sel.kind === Kind.FIELD) {
      if (sel.alias) m.aliases++;
      const size = listSize(sel);
      const name = sel.name.value;
      // an `ofType` chain in introspection is one level of depth, its length measured apart
      const ofType = within.introspection && name === "ofType";
      const inner = sel.selectionSet
        ? measure(sel.selectionSet, fragments, seen, {
            introspection: within.introspection || name === "__schema" || name === "__type",
            ofTypeRun: ofType ? within.ofTypeRun + 1 : 0,
          })
        : null;
      m.cost += 1 + (inner ? size * inner.cost : 0);
      if (inner) child = { ...inner, cost: 0 };
      depthAdd = ofType && within.ofTypeRun > 0 ? 0 : 1;
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      child = measure(sel.selectionSet, fragments, seen, within);
    } else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      if (frag && !seen.has(name)) {
        seen.add(name);
        child = measure(frag.selectionSet, fragments, seen, within);
        seen.delete(name);
      }
    }
    if (child) {
      m.cost += child.cost;
      m.aliases += child.aliases;
      m.directives += child.directives;
      m.depth = Math.max(m.depth, child.depth + depthAdd);
      m.typeRefDepth = Math.max(m.typeRefDepth, child.typeRefDepth);
    } else {
      m.depth = Math.max(m.depth, depthAdd);
    }
  }
  return m;
}

/** A validation rule applying the limits to every operation of the document. */
export function limitsRule(limits: GraphQLLimits) {
  return (context: ValidationContext): ASTVisitor => {
    const doc = context.getDocument();
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    return {
      OperationDefinition(op) {
        const m = measure(op.selectionSet, fragments, new Set());
        const refuse = (what: string, value: number, max: number) =>
          context.reportError(tooComplex(`The ${what} of this operation is ${value}; at most ${max} is allowed.`));
        if (m.depth > limits.maxDepth) refuse("depth", m.depth, limits.maxDepth);
        if (m.typeRefDepth > limits.maxDepth) refuse("depth of ofType nesting", m.typeRefDepth, limits.maxDepth);
        if (m.aliases > limits.maxAliases) refuse("number of aliases", m.aliases, limits.maxAliases);
        if (m.directives + (op.directives?.length ?? 0) > limits.maxDirectives)
          refuse("number of directives", m.directives, limits.maxDirectives);
        if (m.cost > limits.maxCost) refuse("cost (fields × list sizes)", m.cost, limits.maxCost);
        return false; // measured: no need to walk the operation again
      },
    };
  };
}

/** Counts the document's tokens with graphql-js's own lexer before anything recursive runs. */
function assertTokens(source: string | Source, max: number): void {
  const lexer = new Lexer(typeof source === "string" ? new Source(source) : source);
  let count = 0;
  try {
    while (lexer.advance().kind !== TokenKind.EOF) {
      if (++count > max) throw tooComplex(`The document has more than ${max} tokens.`);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    // a lexing error: parse reports it as the syntax error it is
  }
}

/** Parses within the token limit (what the plugin's parse does). */
export function parseWithinLimits(
  source: Parameters<typeof parse>[0],
  options?: Parameters<typeof parse>[1],
  limits: GraphQLLimits = DEFAULT_GRAPHQL_LIMITS,
): DocumentNode {
  assertTokens(source, limits.maxTokens);
  return parse(source, options);
}

/** The envelop plugin: a token limit at parse, the limits rule at validation. */
export function useGraphQLLimits(limits: GraphQLLimits = DEFAULT_GRAPHQL_LIMITS): Plugin {
  const rule = limitsRule(limits);
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => parseWithinLimits(source, options, limits));
    },
    onValidate({ addValidationRule }) {
      addValidationRule(rule);
    },
  };
}
