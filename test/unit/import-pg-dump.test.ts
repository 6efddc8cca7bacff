// The plain-format pg_dump reader (src/modules/portability/pg-dump.ts) on dumps written here as
// pg_dump writes them: COPY rows with PostgreSQL's text-format escapes, INSERTs with SQL literals
// ('' quotes, E'' escapes, standard_conforming_strings off, several rows, ON CONFLICT, casts),
// what it reads past (DDL with $$ bodies and comments holding quotes and semicolons, psql's
// meta-commands, other tables' rows, even their overlong lines), and what fails the file at its
// line: a cut COPY, a cut INSERT, a missing last line, an overlong line or row, another encoding.
// And Cusdis's reading of a dump (parse-cusdis.ts): comments held until the pages are read, within
// their bound.
import { describe, expect, it } from "vitest";
import { isPgDump, readPgDump, type DumpEvent } from "../../src/modules/portability/pg-dump.js";
import { copyField } from "../../src/modules/portability/pg-dump-scanner.js";
import { parseCusdisDump } from "../../src/modules/portability/parse-cusdis.js";
import { SourceFailure, type SourceItem } from "../../src/modules/portability/source.js";

const HEAD = `--
-- PostgreSQL database dump
--

\\restrict Zq1x

-- Dumped from database version 15.20

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
`;
const FOOT = `
--
-- PostgreSQL database dump complete
--

\\unrestrict Zq1x
`;

const dump = (body: string) => `${HEAD}${body}${FOOT}`;

async function* chunks(text: string, size = 7) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function events(text: string, opts: { defaultColumns?: Record<string, string[]>; limits?: { line: number; row: number } } = {}) {
  const out: DumpEvent[] = [];
  for await (const e of readPgDump(chunks(text), { tables: new Set(["pages", "comments"]), ...opts })) out.push(e);
  return out;
}

const rows = (es: DumpEvent[]) => es.flatMap((e) => (e.kind === "row" ? [[e.table, ...e.values]] : []));

/** the failure reading `text` ends in: [position, message] */
async function failure(text: string, opts: Parameters<typeof events>[1] = {}): Promise<[string, string]> {
  try {
    await events(text, opts);
  } catch (err) {
    if (err instanceof SourceFailure) return [err.position, err.message];
    throw err;
  }
  throw new Error("read without failing");
}

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split("\n").length;

describe("pg_dump: what a file is", () => {
  it("is told by pg_dump's first lines (not pg_dumpall's)", () => {
    expect(isPgDump(HEAD)).toBe(true);
    expect(isPgDump(HEAD.replaceAll("\n", "\r\n"))).toBe(true);
    expect(isPgDump("--\n-- PostgreSQL database cluster dump\n--\n")).toBe(false);
    expect(isPgDump("CREATE TABLE pages (id text);\n")).toBe(false);
  });
});

describe("pg_dump: COPY rows", () => {
  it("decodes PostgreSQL's COPY text escapes, \\N as NULL, bytes as UTF-8", () => {
    expect(copyField("\\N")).toBeNull();
    expect(copyField("\\\\N")).toBe("\\N");
    expect(copyField("a\\tb\\nc\\rd\\be\\ff\\vg\\\\h")).toBe("a\tb\nc\rd\be\ff\vg\\h");
    expect(copyField("caf\\303\\251 \\x41\\x4 \\101")).toBe("café A\u0004 A");
    expect(copyField("\\q stays q")).toBe("q stays q");
    expect(copyField("")).toBe("");
  });

  it("reads the asked tables' COPY blocks, their columns as named, and reads past everything else", async () => {
    const text = dump(`
CREATE FUNCTION public.f() RETURNS trigger LANGUAGE plpgsql AS $_$ BEGIN RAISE NOTICE 'a;b'; RETURN NULL; END $_$;
COMMENT ON TABLE public.users IS E'it''s; -- not a comment';
/* a comment; with 'a quote' /* nested */ still */
CREATE TABLE public.pages (
    id text NOT NULL,
    slug text NOT NULL,
    "projectId" text NOT NULL,
    CONSTRAINT pages_pkey PRIMARY KEY (id)
);

COPY public.accounts (id, note) FROM stdin;
1\tnot; a statement
2\t\\.x
\\.

COPY public.comments (id, "pageId", content) FROM stdin;
c1\tp1\ttab\\there\\nnew \\\\ back ' quote
c2\tp1\t\\N
\\.

COPY public.pages (id, slug, "projectId") FROM stdin;
p1\t/a/\tpr
\\.

ALTER TABLE ONLY public.pages ADD CONSTRAINT pages_pkey PRIMARY KEY (id);
`);
    const es = await events(text);
    expect(es.map((e) => `${e.kind} ${e.table} ${e.line}`)).toEqual([
      `table pages ${lineOf(text, "CREATE TABLE public.pages")}`,
      `table comments ${lineOf(text, "COPY public.comments")}`,
      `row comments ${lineOf(text, "c1\t")}`,
      `row comments ${lineOf(text, "c2\t")}`,
      `end comments ${lineOf(text, "c2\t") + 1}`,
      `table pages ${lineOf(text, "COPY public.pages")}`,
      `row pages ${lineOf(text, "p1\t/a/")}`,
      `end pages ${lineOf(text, "p1\t/a/") + 1}`,
    ]);
    expect(es[0]).toMatchObject({ schema: "public", columns: ["id", "slug", "projectId"] });
    expect(es[1]).toMatchObject({ schema: "public", columns: ["id", "pageId", "content"] });
    expect(rows(es)).toEqual([
      ["comments", "c1", "p1", "tab\there\nnew \\ back ' quote"],
      ["comments", "c2", "p1", null],
      ["pages", "p1", "/a/", "pr"],
    ]);
  });

  it("a Windows line end is no part of a row", async () => {
    const text = dump(`COPY public.pages (id, slug) FROM stdin;\r\np1\t/a/\r\n\\.\r\n`);
    expect(rows(await events(text))).toEqual([["pages", "p1", "/a/"]]);
  });
});

describe("pg_dump: INSERT rows", () => {
  it("reads --inserts and --column-inserts: '' quotes, E'' escapes, NULL, booleans, several rows, ON CONFLICT, casts", async () => {
    const text = dump(`
INSERT INTO public.users VALUES ('u1', 'it''s; (not) ours', E'\\'');
INSERT INTO public.comments VALUES ('c1', 'p1', 'tab\there
new \\ back '' quote', true, NULL);
INSERT INTO public.comments VALUES ('c2', 'p1', E'e\\tscape\\n\\\\ \\'q\\' \\x41\\101 caf\\303\\251 \\u00e9', false, NULL);
INSERT INTO "public"."pages" ("id", slug, "projectId") OVERRIDING SYSTEM VALUE VALUES
\t('p1', '/a/', 'pr'),
\t('p2', '/b/'::text, NULL) ON CONFLICT DO NOTHING;
`);
    const es = await events(text, { defaultColumns: { comments: ["id", "pageId", "content", "approved", "parentId"] } });
    expect(rows(es)).toEqual([
      ["comments", "c1", "p1", "tab\there\nnew \\ back ' quote", "true", null],
      ["comments", "c2", "p1", "e\tscape\n\\ 'q' AA café é", "false", null],
      ["pages", "p1", "/a/", "pr"],
      ["pages", "p2", "/b/", null],
    ]);
    expect(es.filter((e) => e.kind === "row").map((e) => e.line)).toEqual([
      lineOf(text, "('c1'"),
      lineOf(text, "('c2'"),
      lineOf(text, "('p1'"),
      lineOf(text, "('p2'"),
    ]);
    expect(es.find((e) => e.kind === "row" && e.table === "comments")).toMatchObject({ guessed: true });
    expect(es.find((e) => e.kind === "row" && e.table === "pages")).toMatchObject({ guessed: false, columns: ["id", "slug", "projectId"] });
    expect(es.filter((e) => e.kind === "end").map((e) => e.table)).toEqual(["comments", "pages"]);
  });

  it("with standard_conforming_strings off, '' strings take backslash escapes; a CREATE TABLE gives an INSERT's columns", async () => {
    const text = dump(`SET standard_conforming_strings = off;
CREATE TABLE public.pages (slug text, id text);
INSERT INTO public.pages VALUES ('a\\\\b\\n', 'p1');
`);
    expect(await events(text)).toContainEqual(expect.objectContaining({ kind: "row", columns: ["slug", "id"], values: ["a\\b\n", "p1"] }));
  });

  it("an INSERT naming no columns, without a CREATE TABLE or a known order, fails naming --column-inserts", async () => {
    const text = dump("INSERT INTO public.pages VALUES ('p1', '/a/');\n");
    expect(await failure(text)).toEqual([`line ${lineOf(text, "INSERT")}`, expect.stringMatching(/--column-inserts$/)]);
  });
});

describe("pg_dump: a dump that is not whole fails at its line", () => {
  const whole = dump(`COPY public.comments (id, content) FROM stdin;
c1\tone
c2\ttwo
\\.

INSERT INTO public.pages (id, slug) VALUES ('p1', 'a
b');
`);

  it("cut in a COPY's rows (no \\.), even mid-row", async () => {
    for (const cut of [whole.indexOf("c2\t") + 4, whole.indexOf("\\.")]) {
      const text = whole.slice(0, cut);
      const [position, message] = await failure(text);
      expect(position).toBe(`line ${text.split("\n").length - (text.endsWith("\n") ? 1 : 0)}`);
      expect(message).toBe(
        `the dump ends inside the rows of comments (its COPY at line ${lineOf(whole, "COPY")}) before their \\. line: it is truncated`,
      );
    }
  });

  it("cut mid-row, its fields short: truncated at its end; a short row followed by more: that row is wrong", async () => {
    const text = whole.slice(0, whole.indexOf("c2\t"));
    expect(await failure(`${text}c2`)).toEqual([
      `line ${lineOf(whole, "c2\t")}`,
      `the dump ends inside the rows of comments (its COPY at line ${lineOf(whole, "COPY")}) before their \\. line: it is truncated`,
    ]);
    expect(await failure(whole.replace("c2\ttwo", "c2"))).toEqual([
      `line ${lineOf(whole, "c2\t")}`,
      "a row of comments with 1 fields for its 2 columns",
    ]);
  });

  it("cut in an INSERT's string or before its ;", async () => {
    const inString = whole.slice(0, whole.indexOf("\nb');") + 1);
    expect(await failure(inString)).toEqual([
      `line ${lineOf(whole, "\nb');")}`,
      `the dump ends inside a value that starts at line ${lineOf(whole, "INSERT")}: it is truncated`,
    ]);
    const beforeEnd = whole.slice(0, whole.indexOf("b');") + 3);
    expect(await failure(beforeEnd)).toEqual([
      `line ${lineOf(whole, "b');")}`,
      `the dump ends inside a statement that starts at line ${lineOf(whole, "INSERT")} (no ; ends it): it is truncated`,
    ]);
  });

  it("cut between statements: pg_dump's last line is missing", async () => {
    const text = whole.slice(0, whole.indexOf("-- PostgreSQL database dump complete"));
    const [position, message] = await failure(text);
    expect(position).toBe(`line ${text.trimEnd().split("\n").length}`);
    expect(message).toBe('the dump ends without pg_dump\'s last line ("-- PostgreSQL database dump complete"): it is truncated');
    // two dumps one after the other: the second's last line ends it
    expect(rows(await events(`${whole}${whole}`))).toHaveLength(6);
  });
});

describe("pg_dump: bounds", () => {
  const limits = { line: 1000, row: 200 };

  it("a line longer than the bound fails at its line, but in another table's COPY rows, which are read past", async () => {
    const long = "x".repeat(1500);
    const other = dump(`COPY public.users (id, note) FROM stdin;\n1\t${long}\n\\.\nCOPY public.pages (id) FROM stdin;\np1\n\\.\n`);
    expect(rows(await events(other, { limits }))).toEqual([["pages", "p1"]]);
    const ours = dump(`COPY public.pages (id, slug) FROM stdin;\np1\t${long}\n\\.\n`);
    expect(await failure(ours, { limits })).toEqual([`line ${lineOf(ours, "p1\t")}`, "not read: a line longer than 1000 characters"]);
    const sql = dump(`INSERT INTO public.users VALUES ('${long}');\n`);
    expect(await failure(sql, { limits })).toEqual([`line ${lineOf(sql, "INSERT")}`, "not read: a line longer than 1000 characters"]);
  });

  it("an asked table's row past its bound fails where it starts, across lines too; another table's is not held", async () => {
    const many = Array.from({ length: 20 }, () => "y".repeat(50)).join("\n");
    const ours = dump(`INSERT INTO public.pages (id, slug) VALUES ('p1', '${many}');\n`);
    expect(await failure(ours, { limits })).toEqual([`line ${lineOf(ours, "INSERT")}`, "not read: a value longer than 200 characters"]);
    const other = dump(`INSERT INTO public.users (id, note) VALUES ('u1', '${many}');\n`);
    expect(await events(other, { limits })).toEqual([]);
  });

  it("a dump in another encoding than UTF-8 is refused", async () => {
    const text = dump("SET client_encoding = 'LATIN1';\n");
    expect(await failure(text)).toEqual([
      `line ${lineOf(text, "'LATIN1'")}`,
      "the dump is in LATIN1, not UTF-8: dump it again with pg_dump --encoding=UTF8",
    ]);
  });
});

describe("Cusdis's dump", () => {
  const comments = (n: number) =>
    Array.from(
      { length: n },
      (_, i) => `c${i}\tp1\t${i ? `c${i - 1}` : "\\N"}\t2024-03-01 10:00:0${i % 10}\t\\N\tA\t\\N\tbody ${i}\tt`,
    ).join("\n");
  const cusdis = (n: number) =>
    dump(`COPY public.comments (id, "pageId", "parentId", created_at, "deletedAt", by_nickname, by_email, content, approved) FROM stdin;
${comments(n)}
\\.

COPY public.pages (id, slug, url, title, created_at) FROM stdin;
p1\t/a/\thttps://x.example/a/\tA\t2024-03-01 09:00:00+00
\\.
`);

  async function items(text: string, maxHeld?: number) {
    const out: SourceItem[] = [];
    for await (const item of parseCusdisDump(chunks(text, 64), undefined, maxHeld)) out.push(item);
    return out;
  }

  it("holds the comments that come before the pages and hands them on after the pages, in order", async () => {
    const text = cusdis(3);
    const got = await items(text);
    expect(
      got.map((i) => (i.kind === "post" ? `post ${i.key} ${i.position}` : i.kind === "thread" ? `thread ${i.position}` : i.kind)),
    ).toEqual([`thread line ${lineOf(text, "p1\t/a/")}`, ...[0, 1, 2].map((n) => `post c${n} line ${lineOf(text, `c${n}\tp1`)}`)]);
    expect(got[0]).toMatchObject({ kind: "thread", createdAt: new Date("2024-03-01T09:00:00Z") });
    expect(got[2]).toMatchObject({ kind: "post", parentKey: "c0", status: "approved", createdAt: new Date("2024-03-01T10:00:01Z") });
  });

  it("past the held bound the dump fails at the comment that passes it, naming the dump that writes pages first", async () => {
    await expect(items(cusdis(10), 300)).rejects.toMatchObject({
      position: expect.stringMatching(/^line \d+$/),
      message: expect.stringMatching(
        /^more than 300 bytes of comments came before this dump's pages .*: pg_dump --data-only -t pages -t comments /,
      ),
    });
    // pages first (as a --data-only dump writes them): nothing is held
    const text = cusdis(10);
    const pages = text.slice(text.indexOf("COPY public.pages"), text.indexOf("\\.\n", text.indexOf("COPY public.pages")) + 3);
    const pagesFirst = dump(`${pages}\n${text.slice(text.indexOf("COPY public.comments"), text.indexOf("COPY public.pages"))}`);
    expect((await items(pagesFirst, 1000)).filter((i) => i.kind === "post")).toHaveLength(10);
  });

  it("comments without pages, another schema's pages, a table that is not Cusdis's, and no table of Cusdis's fail the dump", async () => {
    const text = cusdis(2);
    await expect(items(text.slice(0, text.indexOf("COPY public.pages")) + FOOT)).rejects.toMatchObject({
      message: "the dump holds comments but no pages: dump both tables (pg_dump --data-only -t pages -t comments)",
    });
    await expect(items(text.replace("COPY public.pages", "COPY other.pages"))).rejects.toMatchObject({
      message: "the dump holds pages of schema other besides Cusdis's tables of schema public: dump one schema (pg_dump -n <schema>)",
    });
    await expect(items(text.replace(", by_nickname,", ", nickname,"))).rejects.toMatchObject({
      message: expect.stringMatching(/^not Cusdis's comments table: it has no column by_nickname/),
    });
    await expect(items(dump("COPY public.users (id) FROM stdin;\nu1\n\\.\n"))).rejects.toMatchObject({
      position: "line 1",
      message: "not a dump of Cusdis's tables: it holds no pages or comments table",
    });
  });
});
