// GET /api/v1/openapi.json (contract section 7): an OpenAPI 3.1 document of every REST route,
// generated at start-up from the route table itself and the GraphQL schema its operations run on —
// never kept by hand. For each route:
//  - path parameters come from the path, query parameters from the route's paramVars (path-bound
//    variables first, then the query's, by the table's convention), typed by the operation's
//    variables;
//  - the request body is the `input` variable's input type (or the variables a route names in
//    `body`);
//  - the response is the operation's selection set over the schema's output types (aliases
//    included), picked or reshaped the way the route's `respond` does (`response`), 204 for DELETE
//    and for a route that says `status: 204` (POST /me/sign-out);
//  - errors are RFC 9457 problem documents; auth is X-API-Key, the admin JWT or the console session.
import {
  getNullableType,
  isListType,
  isNonNullType,
  GraphQLNonNull,
  Kind,
  typeFromAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { queryParamsOf, type AnyRoute } from "./router.js";
import { inputSchema, selectionSchema, shapesFor, type JsonSchema } from "./json-schema.js";

const PROBLEM: JsonSchema = {
  type: "object",
  description: "An RFC 9457 problem document.",
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    code: { type: "string", description: "Stable, snake_case." },
    detail: { type: "string" },
    errors: {
      type: "array",
      items: { type: "object", properties: { path: { type: "string" }, message: { type: "string" } }, required: ["path", "message"] },
    },
    requestId: { type: "string" },
    required: { type: "string", description: "missing_capability: the capability needed" },
  },
  required: ["type", "title", "status", "code", "detail"],
};

const RATE_HEADERS = {
  "RateLimit-Limit": { schema: { type: "integer" } },
  "RateLimit-Remaining": { schema: { type: "integer" } },
  "RateLimit-Reset": { schema: { type: "integer" } },
};

/** The reader's identity assertion as a header parameter, so generated clients type it per operation. */
const identityHeader = (required: boolean) => ({
  name: "X-Service-Identity",
  in: "header",
  required,
  description: required
    ? "The reader's identity assertion (an HS256 JWT your backend signs with the tenant's identity secret): this action is the reader's."
    : "The reader's identity assertion, when the caller acts for a reader (an author deleting their own comment, reading their own pending comment, a ticket that also carries their notifications).",
  schema: { type: "string" },
});

/** The reader's own address and user agent, set by a backend for Akismet's check (docs/safety.md); never stored. */
const READER_CLIENT_HEADERS = [
  {
    name: "X-Service-Reader-Ip",
    in: "header",
    required: false,
    description: "The reader's IP address, sent to Akismet with the check of this comment (when the tenant has Akismet); never stored.",
    schema: { type: "string" },
  },
  {
    name: "X-Service-Reader-Agent",
    in: "header",
    required: false,
    description: "The reader's browser user agent, sent to Akismet with the check of this comment; never stored.",
    schema: { type: "string" },
  },
];

/** Writes take an Idempotency-Key (contract section 11); a repeat's answer says it is one. */
const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1–255 visible ASCII characters (e.g. a UUID). A repeat with the same key, method, path, body and credentials within the tenant's idempotency.ttlHours (24 h) answers the first outcome again, with Idempotent-Replayed: true, without doing the work twice; the same key for another request is 422 idempotency_key_reused; a repeat while the first still runs is 409 idempotency_in_progress (Retry-After).",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
};
const REPLAYED_HEADERS = {
  "Idempotent-Replayed": {
    description: "true when this is the stored answer of an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
};

/** Read-your-writes with read replicas (contract section 26; docs/scaling.md "Read replicas"). */
const CONSISTENCY_HEADERS = {
  "X-Service-Consistency": {
    description:
      "With read replicas configured: an opaque token of the database position this write reached. Send it back on later reads (X-Service-Consistency) to see this write even when a replica serves them.",
    schema: { type: "string" },
  },
};
const CONSISTENCY = {
  name: "X-Service-Consistency",
  in: "header",
  required: false,
  description:
    "The token a write's answer carried: the read is served by a read replica only once it has that write, else by the primary. Any other value sends the read to the primary. Comment search with words first waits (at most 1 s) until its documents hold the tenant's writes committed before it came.",
  schema: { type: "string", maxLength: 64 },
};

/** The stream's ways to authenticate and to resume, for both streams. */
const STREAM_PARAMETERS = [
  {
    name: "ticket",
    in: "query",
    required: false,
    description:
      "A one-time stream ticket (st_…) from POST /api/v1/stream/ticket, for a browser, which cannot set headers on an EventSource.",
    schema: { type: "string" },
  },
  {
    name: "token",
    in: "query",
    required: false,
    deprecated: true,
    description: "Deprecated: an API key in the query string, where it ends up in logs and histories; use ticket.",
    schema: { type: "string" },
  },
  {
    name: "lastEventId",
    in: "query",
    required: false,
    description: "The id of the last event seen, when Last-Event-ID cannot be sent: the stream replays what came after it.",
    schema: { type: "string" },
  },
  {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description: "The id of the last event seen (an EventSource sends it when it reconnects): the stream replays what came after it.",
    schema: { type: "string" },
  },
];

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

const ERRORS: Record<string, string> = {
  "400": "Malformed JSON, or a bad path or query parameter, or a query parameter the route does not take",
  "401": "No, unknown, expired or revoked credentials, or a bad identity assertion",
  "403": "Authenticated but not allowed (missing capability, not the author, origin not allowed, CSRF)",
  "404": "Unknown id (or another tenant's)",
  "409": "The resource's state forbids the change",
  "413": "Body over the limit",
  "415": "A write without a JSON content type",
  "422": "Well-formed but invalid fields; `errors` lists them all",
  "429": "Over the rate limit (Retry-After)",
  "503": "A dependency is down; retry",
};

function operationOf(doc: DocumentNode): { op: OperationDefinitionNode; fragments: Map<string, FragmentDefinitionNode> } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let op: OperationDefinitionNode | undefined;
  for (const d of doc.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    if (d.kind === Kind.OPERATION_DEFINITION) op = d;
  }
  if (!op) throw new Error("openapi: a route's document has no operation");
  return { op, fragments };
}

/** The descriptions of the root field's arguments, by the variable each is given. */
function argumentDescriptions(op: OperationDefinitionNode, root: GraphQLObjectType): Map<string, string> {
  const out = new Map<string, string>();
  for (const sel of op.selectionSet.selections) {
    if (sel.kind !== Kind.FIELD) continue;
    const field = root.getFields()[sel.name.value];
    for (const arg of sel.arguments ?? []) {
      const description = field?.args.find((a) => a.name === arg.name.value)?.description;
      if (arg.value.kind === Kind.VARIABLE && description) out.set(arg.value.name.value, description);
    }
  }
  return out;
}

/** What a route's path or query parameter means, where its GraphQL argument does not say (src/modules/rest-parameters.ts). */
export type DescribeParameter = (method: string, path: string, where: "path" | "query", name: string) => string | undefined;

export function buildOpenApi(opts: {
  schema: GraphQLSchema;
  routes: readonly AnyRoute[];
  version: string;
  describeParameter?: DescribeParameter;
}): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  // operationIds are unique (generators name functions and types by them): where two routes run
  // the same operation (DELETE /keys/{id} and /admin/keys/{id}), the admin-only one is admin…
  const opName = (r: AnyRoute) =>
    operationOf(r.document as DocumentNode)
      .op.name!.value.replace(/^Rest/, "")
      .replace(/^./, (c) => c.toLowerCase());
  const shared = new Set(opts.routes.map(opName).filter((id, i, all) => all.indexOf(id) !== i));
  const uniqueId = (r: AnyRoute): string => {
    const id = opName(r);
    return shared.has(id) && r.adminOnly ? `admin${id.replace(/^./, (c) => c.toUpperCase())}` : id;
  };

  for (const r of opts.routes) {
    const { op, fragments } = operationOf(r.document as DocumentNode);
    const root = op.operation === "mutation" ? opts.schema.getMutationType()! : opts.schema.getQueryType()!;
    const result = selectionSchema(root as GraphQLOutputType, op.selectionSet, fragments, opts.schema);
    const variables = new Map(
      (op.variableDefinitions ?? []).map((v) => [v.variable.name.value, typeFromAST(opts.schema, v.type as never) as GraphQLInputType]),
    );

    const pathParams = [...r.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const queryParams = queryParamsOf(r);
    const fromArguments = argumentDescriptions(op, root);
    // the argument's description first (a path parameter feeds the paramVar at its position)
    const described = (where: "path" | "query", name: string, variable: string | undefined) => {
      const description = (variable && fromArguments.get(variable)) || opts.describeParameter?.(r.method, r.path, where, name);
      return description ? { description } : {};
    };
    const parameters = [
      ...(r.identity ? [identityHeader(r.identity === "required")] : []),
      ...(r.readerClient ? READER_CLIENT_HEADERS : []),
      ...(r.method !== "GET" ? [IDEMPOTENCY_KEY] : [CONSISTENCY]),
      ...pathParams.map((name, i) => ({
        name,
        in: "path",
        required: true,
        ...described("path", name, r.paramVars?.[i]),
        schema: { type: "string" },
      })),
      ...queryParams.map((name) => {
        const v = variables.get(name);
        const named = v ? getNullableType(v) : undefined;
        // a list travels as one comma-separated value
        const schema = !v
          ? { type: "string" }
          : isListType(named)
            ? { type: "string", description: "comma-separated" }
            : inputSchema(new GraphQLNonNull(getNullableType(v) as GraphQLInputType));
        // a non-null variable is a parameter the route needs (its absence is a 400 naming it)
        return { name, in: "query", required: !!v && isNonNullType(v), ...described("query", name, name), schema };
      }),
    ];

    const input = variables.get("input");
    const bodySchema = input
      ? inputSchema(getNullableType(input) as GraphQLInputType)
      : r.body
        ? {
            type: "object",
            additionalProperties: false,
            properties: Object.fromEntries(r.body.map((n) => [n, inputSchema(variables.get(n)!)])),
            required: r.body.filter((n) => isNonNullType(variables.get(n)!)),
          }
        : null;

    const rootField = op.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD)!;
    const description = root.getFields()[rootField.name.value]?.description;
    // no body: a DELETE, or a route that says it answers 204 (POST /me/sign-out)
    const responseSchema =
      r.method === "DELETE" || r.status === 204
        ? null
        : r.response
          ? r.response(shapesFor(result))
          : (result.properties as Record<string, JsonSchema>)[rootField.alias?.value ?? rootField.name.value]!;
    const writeHeaders = r.method !== "GET" ? { ...RATE_HEADERS, ...REPLAYED_HEADERS, ...CONSISTENCY_HEADERS } : RATE_HEADERS;
    const status = String(typeof r.status === "number" ? r.status : r.method === "DELETE" ? 204 : 200);
    const success =
      responseSchema === null
        ? { [status]: { description: "Done", headers: writeHeaders } }
        : typeof r.status === "function"
          ? Object.fromEntries(
              ["200", "201"].map((s) => [
                s,
                {
                  description: s === "201" ? "Created" : "OK",
                  headers: writeHeaders,
                  content: { "application/json": { schema: responseSchema } },
                },
              ]),
            )
          : {
              [status]: {
                description: "OK",
                headers: {
                  ...writeHeaders,
                  ...(r.cache ? { ETag: { schema: { type: "string" } }, "Cache-Control": { schema: { type: "string" } } } : {}),
                },
                content: { "application/json": { schema: responseSchema } },
              },
              ...(r.cache ? { "304": { description: "Not modified (If-None-Match)" } } : {}),
            };
    const errorsOf = [
      "400",
      "401",
      "403",
      "404",
      "429",
      "503",
      ...(bodySchema ? ["413", "415"] : []),
      ...(bodySchema || r.method !== "GET" ? ["422"] : []),
      ...(r.method !== "GET" ? ["409"] : []),
    ];
    const path = `/api/v1${r.path.replace(/:(\w+)/g, "{$1}")}`;
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      operationId: uniqueId(r),
      ...(description ? { description } : {}),
      security: r.adminOnly ? [{ adminJwt: [] }, { consoleSession: [] }] : [{ apiKey: [] }, { adminJwt: [] }, { consoleSession: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(bodySchema ? { requestBody: { required: true, content: { "application/json": { schema: bodySchema } } } } : {}),
      responses: { ...success, ...Object.fromEntries(errorsOf.sort().map((c) => [c, problem(ERRORS[c]!)])) },
    };
  }
  paths["/api/v1/stream/{discussionId}"] = {
    get: {
      operationId: "stream",
      description:
        "Server-Sent Events of one discussion: `connected` (id: the seq the stream continues after: the Last-Event-ID, or the head without one), then every event as id: <seq> / event: <name> / data: <envelope>; Last-Event-ID resumes. Auth: X-API-Key, ?ticket= or the deprecated ?token=.",
      security: [{ apiKey: [] }, {}],
      parameters: [
        { name: "discussionId", in: "path", required: true, description: "The discussion's id.", schema: { type: "string" } },
        ...STREAM_PARAMETERS,
      ],
      responses: {
        "200": { description: "The event stream", content: { "text/event-stream": { schema: { type: "string" } } } },
        ...Object.fromEntries(["400", "401", "403", "404", "429", "503"].map((c) => [c, problem(ERRORS[c]!)])),
      },
    },
  };
  paths["/api/v1/stream/me"] = {
    get: {
      operationId: "streamMe",
      description:
        "Server-Sent Events of the reader's own inbox (contract section 19): `connected` (id: the inbox seq the stream continues after; " +
        'data {"scope":"me","readerId","replayed","unreadCount","heartbeatSeconds"}), then `inbox_item` (id: the reader\'s inbox seq, data: ' +
        'the item as GET /api/v1/me/inbox lists it) and `inbox_read` (data {"unreadCount"}); Last-Event-ID replays the listed items after it. ' +
        'Auth: X-API-Key with X-Service-Identity, or ?ticket= from POST /api/v1/stream/ticket {"scope":"me"}.',
      security: [{ apiKey: [] }, {}],
      parameters: [identityHeader(false), ...STREAM_PARAMETERS],
      responses: {
        "200": { description: "The reader's stream", content: { "text/event-stream": { schema: { type: "string" } } } },
        ...Object.fromEntries(["400", "401", "403", "429", "503"].map((c) => [c, problem(ERRORS[c]!)])),
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Engagement service",
      version: opts.version,
      description: "Comments, reactions, moderation and reply notifications. The same operations are served over GraphQL at /graphql.",
    },
    // the answering server's address replaces it (src/http/openapi-route.ts)
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { Problem: PROBLEM },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key (ek_…) or a publishable key (pk_…)." },
        adminJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The admin JWT (HS256)." },
        consoleSession: {
          type: "apiKey",
          in: "cookie",
          name: "eng_console",
          description: "The console's session (plus X-CSRF-Token on writes).",
        },
        identity: {
          type: "apiKey",
          in: "header",
          name: "X-Service-Identity",
          description: "The reader's identity assertion, for reader actions.",
        },
      },
    },
  };
}
