// The read replicas' pure parts: the one table of where reads go (src/http/database-routes.ts), the
// consistency token (src/db/replicas/consistency-token.ts) and the sticky window of recent writers
// (src/context/read-routing.ts). The routing itself, against a real standby: test/engines/replicas.test.ts.
import { describe, expect, it } from "vitest";
import { getOperationAST, parse } from "graphql";
import { schema } from "../../src/modules/schema.js";
import { DATABASE_ROUTES, readsOfOperation } from "../../src/http/database-routes.js";
import { PRIMARY_LSN, PRIMARY_TOKEN, createConsistencyTokens, formatLsn, parseLsn } from "../../src/db/replicas/consistency-token.js";
import { createRecentWriters } from "../../src/context/read-routing.js";
import { manualClock } from "../../src/lib/clock.js";

const readsOf = (text: string, name?: string) => {
  const doc = parse(text);
  return readsOfOperation(getOperationAST(doc, name), doc);
};

describe("the table of where reads go", () => {
  it("names every Query field, and nothing the schema does not have", () => {
    const fields = Object.keys(schema.getQueryType()!.getFields()).sort();
    const named = Object.keys(DATABASE_ROUTES).filter((k) => !k.includes(" "));
    expect(fields.filter((f) => !named.includes(f))).toEqual([]);
    expect(named.filter((f) => !fields.includes(f))).toEqual([]);
  });

  it("sends the contract's read routes to a replica and the caller's own state to the primary", () => {
    for (const f of [
      "comments",
      "comment",
      "commentContext",
      "discussionCounts",
      "searchComments",
      "recentComments",
      "myInbox",
      "analytics",
      "myExport",
    ])
      expect(DATABASE_ROUTES[f as keyof typeof DATABASE_ROUTES]).toBe("replica");
    for (const f of ["me", "viewer", "settings", "apiKeys", "webhooks"])
      expect(DATABASE_ROUTES[f as keyof typeof DATABASE_ROUTES]).toBe("primary");
  });

  it("routes an operation to a replica only when it is a query whose every root field is a read route", () => {
    expect(readsOf(`query { comments(discussionId: "d") { edges { node { id } } } }`)).toBe("replica");
    expect(readsOf(`query { comments(discussionId: "d") { totalCount } discussion(id: "d") { id } }`)).toBe("replica");
    expect(readsOf(`query { comments(discussionId: "d") { totalCount } settings { locale } }`)).toBe("primary");
    expect(readsOf(`query { ...F } fragment F on Query { settings { locale } }`)).toBe("primary");
    expect(readsOf(`query { ... on Query { comment(id: "x") { id } } }`)).toBe("replica");
    expect(readsOf(`query { __typename }`)).toBe("primary");
    expect(readsOf(`mutation { postComment(discussionId: "d", input: { body: "x" }) { id } }`)).toBe("primary");
    expect(readsOf(`subscription { discussionEvents(discussionId: "d") { type } }`)).toBe("primary");
    expect(readsOf(`query A { comment(id: "x") { id } } query B { me { tenantId } }`, "B")).toBe("primary");
    expect(readsOf(`query A { comment(id: "x") { id } } query B { me { tenantId } }`, "A")).toBe("replica");
    expect(readsOf(`query { unknownField }`)).toBe("primary");
  });
});

describe("the consistency token", () => {
  it("reads and prints PostgreSQL's LSNs", () => {
    expect(parseLsn("16/B374D848")).toBe(0x16b374d848n);
    expect(parseLsn("0/0")).toBe(0n);
    expect(formatLsn(0x16b374d848n)).toBe("16/B374D848");
    for (const bad of [null, "", "16", "16/", "/1", "123456789/0", "G/0", "1/2/3"]) expect(parseLsn(bad)).toBeNull();
  });

  const tokens = createConsistencyTokens("a secret of the service");
  const A = "tenant-a";
  const B = "tenant-b";

  it("round-trips an LSN through a sealed token for its tenant", () => {
    for (const lsn of [0n, 1n, 0x16b374d848n, 0xffffffffffffffffn]) {
      const token = tokens.encode(lsn, A);
      expect(token).toMatch(/^c2\.[A-Za-z0-9_-]{48}$/);
      expect(tokens.decode(token, A)).toBe(lsn);
    }
    expect(tokens.decode(PRIMARY_TOKEN, A)).toBe(PRIMARY_LSN);
  });

  it("says nothing of the position: the LSN's bytes are not in it, and the same position is a new token each time", () => {
    const lsn = 0x16b374d848n;
    const plain = Buffer.alloc(8);
    plain.writeBigUInt64BE(lsn);
    const token = tokens.encode(lsn, A);
    expect(Buffer.from(token.slice(3), "base64url").includes(plain)).toBe(false);
    expect(Buffer.from(token.slice(3), "base64url").includes(plain.subarray(3))).toBe(false);
    expect(tokens.encode(lsn, A)).not.toBe(token);
  });

  it("is not a token to another tenant, to a request without one, or under another secret", () => {
    const token = tokens.encode(42n, A);
    expect(tokens.decode(token, B)).toBe("invalid");
    expect(tokens.decode(token, null)).toBe("invalid");
    expect(createConsistencyTokens("another secret").decode(token, A)).toBe("invalid");
    // a changed byte fails the tag
    const bytes = Buffer.from(token.slice(3), "base64url");
    bytes[14] = bytes[14]! ^ 1;
    expect(tokens.decode(`c2.${bytes.toString("base64url")}`, A)).toBe("invalid");
  });

  it("tells a missing header from a value that is not a token, whatever its size", () => {
    expect(tokens.decode(undefined, A)).toBeNull();
    expect(tokens.decode("", A)).toBeNull();
    for (const bad of ["junk", "c2.", "c1.AAAAAAAAAAA", "c2." + "A".repeat(47), "c2." + "A".repeat(48), "c2." + "A".repeat(100_000)])
      expect(tokens.decode(bad, A)).toBe("invalid");
    expect(tokens.decode([tokens.encode(7n, A), "junk"], A)).toBe(7n);
  });
});

describe("recent writers (DATABASE_REPLICA_STICKY_MS)", () => {
  const identity = (sub: string, iat: number) =>
    ["eyJhbGciOiJIUzI1NiJ9", Buffer.from(JSON.stringify({ sub, iat })).toString("base64url"), "sig"].join(".");

  it("keeps a secret key, the admin JWT and a reader identity sticky for the window, then lets them go", () => {
    const clock = manualClock();
    const writers = createRecentWriters(2_000, clock);
    writers.wrote({ "x-api-key": "sk_one", "x-service-identity": identity("alice", 1) });
    writers.wrote({ authorization: "Bearer admin" });
    expect(writers.wroteLately({ "x-api-key": "sk_one" })).toBe(true);
    expect(writers.wroteLately({ authorization: "Bearer admin" })).toBe(true);
    // the same reader with a newly signed assertion, through another key
    expect(writers.wroteLately({ "x-api-key": "pk_site", "x-service-identity": identity("alice", 99) })).toBe(true);
    expect(writers.wroteLately({ "x-api-key": "sk_two", "x-service-identity": identity("bob", 1) })).toBe(false);
    clock.advance(2_001);
    expect(writers.wroteLately({ "x-api-key": "sk_one" })).toBe(false);
  });

  it("does not make a publishable key sticky: every browser of a site shares it", () => {
    const writers = createRecentWriters(2_000, manualClock());
    writers.wrote({ "x-api-key": "pk_site", "x-service-identity": identity("alice", 1) });
    expect(writers.wroteLately({ "x-api-key": "pk_site" })).toBe(false);
  });

  it("keeps nothing with a window of 0", () => {
    const writers = createRecentWriters(0, manualClock());
    writers.wrote({ "x-api-key": "sk_one" });
    expect(writers.wroteLately({ "x-api-key": "sk_one" })).toBe(false);
  });
});
