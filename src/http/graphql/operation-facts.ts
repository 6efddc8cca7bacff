// What the /graphql plugins and the direct path ask of an operation: its name, whether it is a
// subscription, and how many root fields it has (aliases and fragments included; each is one unit
// of the rate limit). `operationFacts` works them out; `createOperationFactsCache` keeps them per
// parsed document for one yoga server (src/http/graphql/server.ts), whose parser cache hands the
// same document to every request with the same query text.
import { Kind, getOperationAST, type DocumentNode, type SelectionSetNode } from "graphql";

export interface OperationFacts {
  /** the operation's name, or null when it has none (or the document does not determine one) */
  name: string | null;
  subscription: boolean;
  /** root fields, aliases and fragments included (0 when no operation is determined) */
  rootFields: number;
}

export type OperationFactsOf = (document: DocumentNode, operationName: string | null | undefined) => OperationFacts;

/** Root fields of the operation, aliases and fragments included: each is one unit of the rate limit. */
function rootFields(set: SelectionSetNode, fragments: Map<string, SelectionSetNode>, seen = new Set<string>()): number {
  let n = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) n += sel.name.value.startsWith("__") ? 0 : 1;
    else if (sel.kind === Kind.INLINE_FRAGMENT) n += rootFields(sel.selectionSet, fragments, seen);
    else if (!seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      const f = fragments.get(sel.name.value);
      if (f) n += rootFields(f, fragments, seen);
    }
  }
  return n;
}

/** The facts of the operation the document and name select (worked out each call). */
export const operationFacts: OperationFactsOf = (document, operationName) => {
  const op = getOperationAST(document, operationName ?? undefined);
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
  return {
    name: op?.name?.value ?? null,
    subscription: op?.operation === "subscription",
    rootFields: op ? rootFields(op.selectionSet, fragments) : 0,
  };
};

/** `operationFacts`, worked out once per parsed document and operation name, for one server. */
export function createOperationFactsCache(): OperationFactsOf {
  const factsOf = new WeakMap<DocumentNode, Map<string | null, OperationFacts>>();
  return (document, operationName) => {
    let byName = factsOf.get(document);
    if (!byName) factsOf.set(document, (byName = new Map()));
    const key = operationName ?? null;
    let facts = byName.get(key);
    if (!facts) byName.set(key, (facts = operationFacts(document, key)));
    return facts;
  };
}
