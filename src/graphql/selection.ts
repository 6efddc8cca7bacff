// Which fields a GraphQL selection asks for, fragments followed: where an operation's reads go
// (src/http/database-routes.ts) and whether a resolver reads more than its usual statement
// (the comments list's discussion beside its page, src/modules/comments/graphql.ts).
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/** The fields a selection set selects (aliases as their fields, `__` meta fields left out), into `out`. */
export function selectedFieldNames(
  set: SelectionSetNode,
  fragment: (name: string) => SelectionSetNode | undefined,
  out = new Set<string>(),
  seen = new Set<string>(),
): Set<string> {
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (!sel.name.value.startsWith("__")) out.add(sel.name.value);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) selectedFieldNames(sel.selectionSet, fragment, out, seen);
    else if (!seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      const f = fragment(sel.name.value);
      if (f) selectedFieldNames(f, fragment, out, seen);
    }
  }
  return out;
}

/** Whether the field being resolved selects a field `name` of its value (directly or through fragments). */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  const fragment = (n: string) => info.fragments[n]?.selectionSet;
  const out = new Set<string>();
  for (const node of info.fieldNodes) if (node.selectionSet) selectedFieldNames(node.selectionSet, fragment, out);
  return out.has(name);
}
