// A plain-format pg_dump (`pg_dump … > dump.sql`, gzipped or not: decompress.ts) read as a stream,
// line by line, for the rows of the tables asked for (parse-cusdis.ts: Cusdis's pages and
// comments). pg_dump writes a table's rows in one of two forms:
// - `COPY <schema>.<table> (<columns>) FROM stdin;` then one row a line, its fields separated by
//   tabs, `\N` for NULL and backslash escapes as PostgreSQL's COPY text format has them (\\, \t,
//   \n, \r, \b, \f, \v, \NNN octal, \xHH hex: bytes of the dump's UTF-8), up to a line `\.`;
// - with `--inserts` or `--column-inserts`: `INSERT INTO <schema>.<table> [(<columns>)] VALUES
//   (…)[, (…)]…;` (several rows with `--rows-per-insert`), values as SQL literals: '…' strings
//   ('' for a quote; with `standard_conforming_strings` off, and in E'…' strings, backslash
//   escapes too), NULL, true, false, numbers; a string may hold newlines, so a row may span lines.
// Everything else (the header's SETs, schema DDL, sequences, constraints, other tables' rows, psql's
// meta-commands such as `\restrict`) is read past: SQL is scanned for its statements' ends (quotes,
// "identifiers", $tag$ strings, -- and /* */ comments), holding nothing of a statement that is not
// one of the asked tables' rows. A CREATE TABLE of an asked table gives its columns' order, for an
// INSERT that names none.
//
// What a file may make it hold is bounded (PG_DUMP_LIMITS): a line longer than `line` characters
// (but in another table's COPY rows, which are read past), or one row of an asked table holding
// more than `row` characters, fails the file at its line. So does a dump that is not whole: one
// that ends inside a COPY's rows (no `\.`), inside a statement (an INSERT cut short), or without
// pg_dump's last lines (`-- PostgreSQL database dump complete`, which it writes after everything
// else). A dump in another encoding than UTF-8 (`SET client_encoding`) is refused. Failures are
// thrown as SourceFailure at `line N`: the import writes nothing.
import { lines } from "./parse-ndjson.js";
import {
  SqlScanner,
  copyField,
  copyHeader,
  createdTable,
  isWord,
  nameOf,
  qualifiedName,
  type DumpValue,
  type Token,
} from "./pg-dump-scanner.js";
import { SourceFailure } from "./source.js";

export const PG_DUMP_LIMITS = {
  /** the longest line read (characters) */
  line: 16 * 1024 * 1024,
  /** the most characters one row of an asked table may hold */
  row: 16 * 1024 * 1024,
};

/** pg_dump's first lines and its last one (PostgreSQL's pg_backup_archiver.c writes them). */
const HEADER = /^\uFEFF?\s*--\r?\n-- PostgreSQL database dump\r?\n/;
const FOOTER = "-- PostgreSQL database dump complete";

/** Whether a file's start is a plain-format pg_dump's. */
export const isPgDump = (head: string) => HEADER.test(head);

export type { DumpValue };

export type DumpEvent =
  /** an asked table's rows begin (its COPY, its first INSERT) or its CREATE TABLE: its schema and columns */
  | { kind: "table"; table: string; schema: string | null; columns: readonly string[] | null; line: number }
  /** a row of an asked table; `guessed`: its INSERT names no columns and the dump has no CREATE TABLE of it */
  | { kind: "row"; table: string; columns: readonly string[]; guessed: boolean; values: DumpValue[]; line: number }
  /** an asked table's rows end (its COPY's `\.`, the statement after its INSERTs, the file's end) */
  | { kind: "end"; table: string; line: number };

export interface PgDumpOptions {
  /** the tables whose rows are read (by name, whatever their schema) */
  tables: ReadonlySet<string>;
  /** the columns of an INSERT that names none, when the dump has no CREATE TABLE of its table */
  defaultColumns?: Readonly<Record<string, readonly string[]>>;
  signal?: AbortSignal | undefined;
  limits?: typeof PG_DUMP_LIMITS;
}

/** the tokens of a statement's start kept to tell what it is */
const HEAD_TOKENS = 64;
/** the tokens of a kept statement (a COPY's header, a CREATE TABLE of an asked table, a SET) */
const KEPT_TOKENS = 100_000;

interface Copy {
  table: string;
  columns: readonly string[];
  /** an asked table's rows */
  asked: boolean;
  line: number;
}

/** An asked table's INSERT, read as its tokens come. */
interface Insert {
  table: string;
  columns: string[] | null;
  phase: "name" | "columns" | "beforeValues" | "values" | "row" | "tail";
  values: DumpValue[];
  /** the current value: undefined until its first token */
  value: DumpValue | undefined;
  /** parentheses open inside a row (a function call, a ROW(…)) */
  depth: number;
  rowLine: number;
  rowChars: number;
}

interface Statement {
  line: number;
  kind: "head" | "skip" | "kept" | "insert";
  tokens: Token[];
  insert?: Insert;
}

/**
 * The asked tables' rows of a plain pg_dump, with their tables' starts and ends, in the file's
 * order; a dump that is not whole, or passes a bound, throws SourceFailure at its line.
 */
export async function* readPgDump(input: AsyncIterable<Uint8Array | string>, opts: PgDumpOptions): AsyncGenerator<DumpEvent> {
  const limits = opts.limits ?? PG_DUMP_LIMITS;
  let last = 0;
  try {
    yield* read(input, opts, limits, (n) => (last = n));
  } catch (err) {
    // a gzip stream that ends early: where, in lines too
    if (err instanceof SourceFailure && !err.position.startsWith("line "))
      throw new SourceFailure(`line ${last + 1} (${err.position})`, err.message);
    throw err;
  }
}

async function* read(
  input: AsyncIterable<Uint8Array | string>,
  opts: PgDumpOptions,
  limits: typeof PG_DUMP_LIMITS,
  at: (line: number) => void,
): AsyncGenerator<DumpEvent> {
  const out: DumpEvent[] = [];
  /** the columns of the asked tables' CREATE TABLEs */
  const defined = new Map<string, string[]>();
  let statement = null as Statement | null;
  let copy = null as Copy | null;
  /** the asked table whose INSERTs came last, until another statement comes */
  let inserting = null as string | null;
  let whole = false;
  let line = 0;

  const endInserts = (n: number) => {
    if (inserting === null) return;
    out.push({ kind: "end", table: inserting, line: n });
    inserting = null;
  };

  const fail = (n: number, message: string): never => {
    throw new SourceFailure(`line ${n}`, message);
  };

  /** a statement's first tokens tell what it is */
  const decide = (s: Statement) => {
    const [first, second] = s.tokens;
    const keyword = first?.t === "word" ? first.v.toUpperCase() : "";
    if (keyword === "INSERT") {
      if (!second) return;
      if (!isWord(second, "INTO")) return skip(s);
      s.kind = "insert";
      s.insert = { table: "", columns: null, phase: "name", values: [], value: undefined, depth: 0, rowLine: 0, rowChars: 0 };
      const rest = s.tokens.slice(2);
      s.tokens = [];
      for (const token of rest) insertToken(s, token);
      return;
    }
    if (inserting !== null) endInserts(s.line);
    if (keyword === "COPY" || keyword === "SET") {
      s.kind = "kept";
      return;
    }
    if (keyword === "CREATE") {
      // CREATE [UNLOGGED] TABLE [IF NOT EXISTS] <name> (: kept when it is an asked table's
      const open = s.tokens.findIndex((token) => token.t === "punct");
      if (open < 0) {
        if (s.tokens.length >= HEAD_TOKENS) skip(s);
        return;
      }
      const words = s.tokens.slice(1, open);
      const table = words.findIndex((token) => isWord(token, "TABLE"));
      if (table < 0 || s.tokens[open]!.v !== "(") return skip(s);
      const name = qualifiedName(words.slice(table + 1).filter((token) => !isWord(token, "IF", "NOT", "EXISTS")));
      if (!name || !opts.tables.has(name.table)) return skip(s);
      s.kind = "kept";
      return;
    }
    if (first) skip(s);
  };

  const skip = (s: Statement) => {
    s.kind = "skip";
    s.tokens = [];
  };

  const insertToken = (s: Statement, token: Token) => {
    const ins = s.insert!;
    switch (ins.phase) {
      case "name":
        if ((token.t === "punct" && token.v === "(") || isWord(token, "VALUES", "DEFAULT", "SELECT", "OVERRIDING")) {
          const name = qualifiedName(s.tokens);
          s.tokens = [];
          if (!name || !opts.tables.has(name.table) || isWord(token, "DEFAULT", "SELECT")) {
            if (inserting !== null) endInserts(s.line);
            return skip(s);
          }
          if (inserting !== null && inserting !== name.table) endInserts(s.line);
          ins.table = name.table;
          if (inserting === null) {
            out.push({ kind: "table", table: name.table, schema: name.schema, columns: null, line: s.line });
            inserting = name.table;
          }
          ins.phase = token.t === "punct" ? "columns" : isWord(token, "VALUES") ? "values" : "beforeValues";
          if (token.t === "punct") ins.columns = [];
          return;
        }
        if (s.tokens.length >= HEAD_TOKENS) {
          if (inserting !== null) endInserts(s.line);
          return skip(s);
        }
        s.tokens.push(token);
        return;
      case "columns":
        if (token.t === "word" || token.t === "ident") {
          if (ins.columns!.length >= KEPT_TOKENS) fail(token.line, "an INSERT naming too many columns");
          ins.columns!.push(nameOf(token));
        } else if (token.t === "punct" && token.v === ")") ins.phase = "beforeValues";
        else if (token.t !== "punct" || token.v !== ",")
          fail(token.line, `not an INSERT pg_dump writes: ${JSON.stringify(token.v)} among its columns`);
        return;
      case "beforeValues":
        // OVERRIDING SYSTEM VALUE (an identity column's), then VALUES
        if (isWord(token, "VALUES")) ins.phase = "values";
        else if (token.t !== "word") fail(token.line, "not an INSERT pg_dump writes: no VALUES");
        return;
      case "values":
        if (token.t === "punct" && token.v === "(") {
          ins.phase = "row";
          ins.values = [];
          ins.value = undefined;
          ins.depth = 0;
          ins.rowLine = token.line;
          ins.rowChars = 0;
        } else if (token.t === "word")
          ins.phase = "tail"; // ON CONFLICT DO NOTHING
        else if (token.t !== "punct" || token.v !== ",") fail(token.line, "not an INSERT pg_dump writes: a value outside a row's ( )");
        return;
      case "row": {
        if (token.t === "punct") {
          if (token.v === "(") ins.depth++;
          else if (token.v === ")" && ins.depth > 0) ins.depth--;
          else if (ins.depth === 0 && (token.v === "," || token.v === ")")) {
            ins.values.push(ins.value === undefined ? null : ins.value);
            ins.value = undefined;
            if (token.v === ")") {
              row(ins.table, ins.columns, ins.values, ins.rowLine);
              ins.phase = "values";
            }
          }
          return;
        }
        // a value's first token is the value; what follows it (a ::cast) is not
        if (ins.value !== undefined || ins.depth > 0) return;
        ins.rowChars += token.v.length;
        if (ins.rowChars > limits.row) fail(ins.rowLine, `not read: a row longer than ${limits.row} characters`);
        ins.value = token.t === "word" && token.v.toUpperCase() === "NULL" ? null : token.v;
        return;
      }
      case "tail":
        return;
    }
  };

  const row = (table: string, named: string[] | null, values: DumpValue[], n: number) => {
    const columns = named ?? defined.get(table) ?? opts.defaultColumns?.[table] ?? null;
    if (!columns)
      return fail(n, `an INSERT into ${table} naming no columns, and the dump has no CREATE TABLE of it: dump with --column-inserts`);
    const guessed = !named && !defined.has(table);
    if (guessed ? values.length < columns.length : values.length !== columns.length)
      fail(n, `a row of ${table} with ${values.length} values for its ${columns.length} columns`);
    out.push({ kind: "row", table, columns, guessed, values, line: n });
  };

  /** a kept statement ended: a COPY's rows follow, a CREATE TABLE names its columns, a SET changes how strings read */
  const ended = (s: Statement, n: number) => {
    if (s.kind === "insert") {
      if (s.insert!.phase === "name") {
        if (inserting !== null) endInserts(s.line);
      } else if (s.insert!.phase === "row" || s.insert!.phase === "columns") fail(n, "an INSERT whose row is not closed before its ;");
      return;
    }
    if (s.kind !== "kept") return;
    const keyword = (s.tokens[0] as Token).v.toUpperCase();
    if (keyword === "SET") {
      const [, name, eq, value] = s.tokens;
      const setting = name ? nameOf(name) : "";
      const to = (eq && (eq.v === "=" || eq.v.toUpperCase() === "TO") ? value?.v : undefined) ?? "";
      if (setting === "standard_conforming_strings") scanner.escapesInStrings = to.toLowerCase() === "off";
      if (setting === "client_encoding" && !["UTF8", "UTF-8", "UNICODE", "SQL_ASCII"].includes(to.toUpperCase()))
        fail(s.line, `the dump is in ${to}, not UTF-8: dump it again with pg_dump --encoding=UTF8`);
      return;
    }
    if (keyword === "CREATE") {
      const { name, columns } = createdTable(s.tokens);
      defined.set(name.table, columns);
      out.push({ kind: "table", table: name.table, schema: name.schema, columns, line: s.line });
      return;
    }
    // COPY <name> [(<columns>)] FROM stdin: its rows follow, up to \.
    const header = copyHeader(s.tokens);
    if (!header) return;
    const { name, named } = header;
    const table = name?.table ?? "";
    const asked = opts.tables.has(table);
    const columns = named ?? defined.get(table) ?? opts.defaultColumns?.[table] ?? [];
    copy = { table, columns, asked, line: s.line };
    if (asked) out.push({ kind: "table", table, schema: name?.schema ?? null, columns, line: s.line });
    scanner.stopLine = true;
  };

  const scanner = new SqlScanner((token) => {
    if (statement === null) statement = { line: token.line, kind: "head", tokens: [] };
    const s: Statement = statement;
    if (token.t === "punct" && token.v === ";") {
      if (s.kind === "head") decide(s);
      statement = null;
      scanner.keep = true;
      ended(s, token.line);
      return;
    }
    switch (s.kind) {
      case "head":
        s.tokens.push(token);
        decide(s);
        if (s.kind === "head" && s.tokens.length >= HEAD_TOKENS) skip(s);
        break;
      case "kept":
        if (s.tokens.length >= KEPT_TOKENS) fail(s.line, `a statement longer than ${KEPT_TOKENS} words`);
        s.tokens.push(token);
        break;
      case "insert":
        insertToken(s, token);
        break;
      case "skip":
        break;
    }
    scanner.keep = statement !== null && statement.kind !== "skip";
  }, limits.row);

  /** a COPY row whose fields are not its columns: the file's end may come next, which says it is cut short */
  let broken: [number, string] | null = null;
  for await (const l of lines(input, limits.line)) {
    if (broken) fail(...broken);
    if (opts.signal?.aborted) fail(l.n, "stopped");
    at(l.n);
    line = l.n;
    if ("tooLong" in l) {
      if (copy && !copy.asked) continue;
      fail(l.n, `not read: a line longer than ${limits.line} characters`);
    }
    const text = (l as { text: string }).text;
    if (copy) {
      const data = text.endsWith("\r") ? text.slice(0, -1) : text;
      if (data === "\\.") {
        if (copy.asked) out.push({ kind: "end", table: copy.table, line: l.n });
        copy = null;
      } else if (copy.asked) {
        if (data.length > limits.row) fail(l.n, `not read: a row longer than ${limits.row} characters`);
        const fields = data.split("\t");
        if (fields.length !== copy.columns.length)
          broken = [l.n, `a row of ${copy.table} with ${fields.length} fields for its ${copy.columns.length} columns`];
        else out.push({ kind: "row", table: copy.table, columns: copy.columns, guessed: false, values: fields.map(copyField), line: l.n });
      }
    } else if (statement === null && scanner.mode === "normal" && /^\s*\\/.test(text)) {
      // a psql meta-command (\restrict, \connect): one line
    } else {
      if (statement === null && scanner.mode === "normal") {
        const bare = text.trimEnd();
        if (bare === FOOTER) whole = true;
        else if (bare === "-- PostgreSQL database dump") whole = false;
      }
      scanner.feed(`${text}\n`, l.n);
    }
    if (out.length) {
      yield* out;
      out.length = 0;
    }
  }
  if (copy)
    fail(line, `the dump ends inside the rows of ${copy.table} (its COPY at line ${copy.line}) before their \\. line: it is truncated`);
  if (scanner.mode !== "normal" && scanner.mode !== "comment")
    fail(line, `the dump ends inside a value that starts at line ${scanner.openSince}: it is truncated`);
  if (statement !== null)
    fail(line, `the dump ends inside a statement that starts at line ${(statement as Statement).line} (no ; ends it): it is truncated`);
  if (!whole) fail(line, `the dump ends without pg_dump's last line ("${FOOTER}"): it is truncated`);
  endInserts(line);
  yield* out;
}
