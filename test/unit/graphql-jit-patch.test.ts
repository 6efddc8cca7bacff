// graphql-jit as patches/graphql-jit+0.8.7.patch leaves it. graphql-jit 0.8.7 built every field
// resolver's GraphQLResolveInfo (an object of eleven members) and its response path (one object a
// level: five for a field of a list's node) for every call, whether the resolver read it or not: on
// a GraphQL list of 20 comments, 11 fields each, a third of what a request allocated. The patch hands
// `undefined` to a resolver that declares fewer than four parameters and reads neither `arguments`,
// a rest parameter nor a parameter after a default value; anything else is handed the info as
// before. Checked here on schemas of the test's own, compiled as the service compiles them
// (src/http/compiled-operations.ts).
import {
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
  type GraphQLResolveInfo,
} from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import { describe, expect, it } from "vitest";

type Resolver = (...args: never[]) => unknown;

/** A schema `{ items { name } }` over three items, the item's `name` answered by `resolve`. */
function schemaWith(resolve: Resolver) {
  const Item = new GraphQLObjectType({
    name: "Item",
    fields: { n: { type: GraphQLInt }, name: { type: GraphQLString, resolve: resolve as never } },
  });
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: "Query",
      fields: {
        items: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))), resolve: () => [{ n: 0 }, { n: 1 }, { n: 2 }] },
      },
    }),
  });
}

/** Compiles `{ items { name } }` (with its generated source) and runs it. */
async function run(resolve: Resolver) {
  const compiled = compileQuery(schemaWith(resolve), parse("{ items { name } }"), undefined, { debug: true } as never);
  if (!isCompiledQuery(compiled)) throw new Error("not compiled");
  const source = (compiled as unknown as { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation: string })
    .__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  const result = await compiled.query({}, {}, {});
  return { source, result, names: (result.data as { items: { name: string | null }[] } | null)?.items.map((i) => i.name) };
}

const pathOf = (info: GraphQLResolveInfo) => `${info.path.prev?.prev?.key as string}.${info.path.prev?.key as number}.${info.path.key}`;

describe("graphql-jit's resolve info (patched)", () => {
  it("is not built for a resolver that declares fewer than four parameters", async () => {
    const calls: unknown[][] = [];
    const { source, names } = await run(function (this: unknown, parent: { n: number }, args: unknown, context: unknown) {
      calls.push([parent, args, context]);
      return `item ${parent.n}`;
    } as Resolver);
    expect(names).toEqual(["item 0", "item 1", "item 2"]);
    expect(calls).toHaveLength(3);
    // the item's field is called with no info and builds none (the list's own resolver has no parameters either)
    expect(source).not.toMatch(/resolveInfos\./);
    expect(source).toMatch(/\.resolvers\.ItemnameResolver\([^)]*,\s*undefined\s*\)/);
  });

  it("is built, with each item's path, for a resolver that declares it", async () => {
    const { source, names, result } = await run((parent: { n: number }, _a: unknown, _c: unknown, info: GraphQLResolveInfo) => {
      return `${info.fieldName} ${info.parentType.name} ${pathOf(info)} ${parent.n}`;
    });
    expect(result.errors).toBeUndefined();
    expect(names).toEqual(["name Item items.0.name 0", "name Item items.1.name 1", "name Item items.2.name 2"]);
    expect(source).toMatch(/resolveInfos\./);
  });

  it("is built for a resolver that reads a rest parameter or `arguments`", async () => {
    const rest = await run(((...all: unknown[]) => pathOf(all[3] as GraphQLResolveInfo)) as Resolver);
    expect(rest.names).toEqual(["items.0.name", "items.1.name", "items.2.name"]);
    const args = await run(function () {
      // eslint-disable-next-line prefer-rest-params -- what the patch must still serve
      return pathOf(arguments[3] as GraphQLResolveInfo);
    });
    expect(args.names).toEqual(["items.0.name", "items.1.name", "items.2.name"]);
  });

  it("is built for a resolver whose info follows a default value (which `length` does not count)", async () => {
    const resolve = (parent: { n: number }, _a: unknown, _c: unknown = null, info?: GraphQLResolveInfo) =>
      `${info ? pathOf(info) : "none"} ${parent.n}`;
    expect(resolve.length).toBe(2);
    const { names } = await run(resolve as Resolver);
    expect(names).toEqual(["items.0.name 0", "items.1.name 1", "items.2.name 2"]);
  });

  it("is built for a bound function (its source cannot be read)", async () => {
    const target = function (this: { tag: string }, _p: unknown, _a: unknown, _c: unknown) {
      // eslint-disable-next-line prefer-rest-params -- a target that reads the info its bound function cannot show
      return `${this.tag} ${pathOf(arguments[3] as GraphQLResolveInfo)}`;
    };
    const bound = target.bind({ tag: "bound" }) as Resolver;
    expect(bound.length).toBe(3);
    expect(Function.prototype.toString.call(bound)).toContain("[native code]");
    const { names } = await run(bound);
    expect(names).toEqual(["bound items.0.name", "bound items.1.name", "bound items.2.name"]);
  });
});
