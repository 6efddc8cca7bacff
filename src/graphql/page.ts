// Lists as Relay connections (edges/node/pageInfo, first/after), over the domain's keyset pages
// (src/lib/pagination.ts). Forward only: `last`/`before` are refused. The earlier shape stays as
// deprecated fields and arguments (`items`, `nextCursor`; `limit`, `cursor`), which the REST routes
// select, so REST keeps its contract `{items, nextCursor}` from the same fields.
import type { ArgBuilder } from "@pothos/core";
import { builder } from "./builder.js";
import type { Page } from "../lib/pagination.js";
import { AppError, errors } from "../lib/errors.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Pothos refs are invariant in their shape
type AnyRef<T> = import("@pothos/core").ObjectRef<any, T>;

export interface ConnectionShape<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/** The connection type of a node type: `<Name>Connection` with `<Name>Edge`, plus the deprecated page fields. */
export function defineConnection<T>(name: string, nodeRef: AnyRef<T>) {
  return builder.connectionObject(
    {
      type: nodeRef,
      name: `${name}Connection`,
      fields: (t) => ({
        items: t.field({
          type: [nodeRef],
          deprecationReason: "Use edges { node }.",
          resolve: (c) => (c as unknown as ConnectionShape<T>).edges.map((e) => e.node),
        }),
        nextCursor: t.string({
          nullable: true,
          deprecationReason: "Use pageInfo { hasNextPage endCursor }.",
          resolve: (c) => {
            const { pageInfo } = c as unknown as ConnectionShape<T>;
            return pageInfo.hasNextPage ? pageInfo.endCursor : null;
          },
        }),
      }),
    },
    { name: `${name}Edge` },
  );
}

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The deprecated paging arguments every connection field also takes. */
export const legacyPageArgs = (arg: ArgBuilder<Types>) => ({
  limit: arg.int({ deprecationReason: "Use first." }),
  cursor: arg.string({ deprecationReason: "Use after." }),
});

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  limit?: number | null;
  cursor?: string | null;
}

/**
 * Runs a keyset page for connection arguments. `first`/`after` (or the deprecated `limit`/`cursor`)
 * become the page's limit and cursor; their problems are 400 invalid_parameter naming the argument
 * the client sent, exactly as REST reports its query parameters.
 */
export async function connectionPage<T>(
  args: ConnectionArgs,
  load: (page: { limit: number | null | undefined; cursor: string | null | undefined }) => Promise<Page<T>>,
): Promise<ConnectionShape<T>> {
  if (args.last != null || args.before != null) {
    throw errors.invalidParameter([
      { path: args.last != null ? "last" : "before", message: "backward paging is not supported; use first and after" },
    ]);
  }
  const names: Record<string, string> = { limit: args.first != null ? "first" : "limit", cursor: args.after != null ? "after" : "cursor" };
  let page: Page<T>;
  try {
    page = await load({ limit: args.first ?? args.limit, cursor: args.after ?? args.cursor });
  } catch (err) {
    if (err instanceof AppError && err.code === "validation_failed" && err.fieldErrors?.every((f) => f.path in names)) {
      throw errors.invalidParameter(err.fieldErrors.map((f) => ({ ...f, path: names[f.path] ?? f.path })));
    }
    throw err;
  }
  // Cursors are encoded only when a client selects them (getters on the prototypes): most pages
  // are read for their nodes.
  const edges = page.items.map((node) => new Edge(node, page));
  return { edges, pageInfo: new PageInfo(page, edges) };
}

/** An edge whose cursor is encoded when read (one small object per node, no closure). */
class Edge<T> {
  constructor(
    readonly node: T,
    private readonly page: Page<T>,
  ) {}

  get cursor(): string {
    return this.page.cursorOf(this.node);
  }
}

class PageInfo<T> {
  readonly hasPreviousPage = false;
  readonly hasNextPage: boolean;

  constructor(
    private readonly page: Page<T>,
    private readonly edges: Edge<T>[],
  ) {
    this.hasNextPage = page.nextCursor !== null;
  }

  get startCursor(): string | null {
    return this.edges[0]?.cursor ?? null;
  }

  get endCursor(): string | null {
    return this.page.nextCursor ?? this.edges.at(-1)?.cursor ?? null;
  }
}
