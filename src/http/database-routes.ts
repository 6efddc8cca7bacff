// Which database serves each read (contract section 26), in one table: `replica` for the read routes
// (lists, one comment, context, counts, search, feeds, the fragment, recent, inbox, analytics,
// export), `primary` for the rest. GraphQL's Query fields are the reads of /graphql and of REST
// (each REST route runs one GraphQL operation); the endpoints that read outside GraphQL are named by
// method and path. Mutations and subscriptions, and everything not in the table, use the primary:
// writes and what locks. An operation goes to a replica only when every root field it selects does.
// Whether a replica may serve a particular request (its consistency token, a recent write, the
// replicas' health) is src/context/read-routing.ts's. test/unit/database-routes.test.ts fails on a
// Query field this table does not name.
import { Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import { getOperationAST } from "graphql";
import { selectedFieldNames } from "../graphql/selection.js";

export type ReadsFrom = "replica" | "primary";

export const DATABASE_ROUTES = {
  // --- GraphQL Query fields (REST's GET routes run them)
  // comments: lists, one comment, its context, counts, search, the moderation queue
  comments: "replica",
  comment: "replica",
  commentContext: "replica",
  discussionComments: "replica",
  discussionCommentCounts: "replica",
  searchComments: "replica",
  moderationQueue: "replica",
  pendingCommentCount: "replica",
  reports: "replica",
  // discussions: one, lists, counts
  discussion: "replica",
  discussions: "replica",
  discussionCounts: "replica",
  // recent comments, the reader's inbox, analytics, exports
  recentComments: "replica",
  myInbox: "replica",
  inboxUnreadCount: "replica",
  analytics: "replica",
  myExport: "replica",
  readerExport: "replica",
  auditLog: "replica",
  node: "replica",
  nodes: "replica",
  // the caller's own state, keys, settings, webhooks and email: read after the console changes them
  me: "primary",
  myPasskeys: "primary",
  viewer: "primary",
  reader: "primary",
  readerSettings: "primary",
  myNotifications: "primary",
  mySubscription: "primary",
  myModerationDigest: "primary",
  apiKeys: "primary",
  publishableKeys: "primary",
  settings: "primary",
  webhook: "primary",
  webhooks: "primary",
  webhookDeliveries: "primary",
  emailMessages: "primary",
  emailStatus: "primary",
  preview: "primary",
  // the fediverse: an announcement's state, read right after it is asked for; the site's address and
  // followers, read after the console saves its settings
  federationAnnouncement: "primary",
  federationStatus: "primary",
  // Bluesky's linked posts: the console reads them right after linking or posting one
  blueskyLinks: "primary",
  // --- endpoints outside GraphQL
  "GET /api/v1/feeds/*": "replica",
  "GET /embed/v1/discussions/:file": "replica",
  "GET /embed/v1/discussions.html": "replica",
  "GET /api/v1/export": "replica",
} as const satisfies Record<string, ReadsFrom>;

export type DatabaseRoute = keyof typeof DATABASE_ROUTES;

const routeOf = (name: string): ReadsFrom => (DATABASE_ROUTES as Record<string, ReadsFrom>)[name] ?? "primary";

/** Where an operation's reads go: `replica` only for a query whose every root field is a read route. */
export function readsOfOperation(operation: OperationDefinitionNode | null | undefined, document: DocumentNode): ReadsFrom {
  if (!operation || operation.operation !== "query") return "primary";
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
  const names = selectedFieldNames(operation.selectionSet, (name) => fragments.get(name));
  if (names.size === 0) return "primary";
  for (const n of names) if (routeOf(n) !== "replica") return "primary";
  return "replica";
}

/** `readsOfOperation` once per document and operation name (documents are cached by the parsers that make them). */
export function createReadsCache(): (document: DocumentNode, operationName: string | null | undefined) => ReadsFrom {
  const cache = new WeakMap<DocumentNode, Map<string | null, ReadsFrom>>();
  return (document, operationName) => {
    let byName = cache.get(document);
    if (!byName) cache.set(document, (byName = new Map()));
    const key = operationName ?? null;
    let reads = byName.get(key);
    if (reads === undefined) byName.set(key, (reads = readsOfOperation(getOperationAST(document, operationName ?? undefined), document)));
    return reads;
  };
}

/** An endpoint's entry (its reads outside GraphQL). */
export const endpointReads = (route: DatabaseRoute): ReadsFrom => DATABASE_ROUTES[route];
