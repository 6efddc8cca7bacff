// The SQL of a plain-format pg_dump as pg-dump.ts reads it: a scanner that turns its lines into
// tokens (words, '…' / E'…' / $tag$ strings, "identifiers", punctuation; comments dropped), holding
// no more of a string than it is asked to, and the COPY text format's fields with their backslash
// escapes (bytes of the dump's UTF-8 decoded together); and what a statement's tokens name (a
// table, a keyword).
import { SourceFailure } from "./source.js";

/** a field's value: its text, or null for NULL (`\N` in a COPY row) */
export type DumpValue = string | null;

export type Token =
  | { t: "word"; v: string; line: number }
  | { t: "string"; v: string; line: number }
  | { t: "ident"; v: string; line: number }
  | { t: "punct"; v: "(" | ")" | "," | ";"; line: number };

type Mode = "normal" | "string" | "escaped" | "ident" | "dollar" | "comment";

const WORD_RUN = /[^\s'"(),;$/-]+/y;
const DOLLAR = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const ESCAPED_STOP = /['\\]/g;
const COMMENT_MARK = /\/\*|\*\//g;

/** UTF-8 bytes written as escapes (\NNN, \xHH) among characters: decoded together once the run of bytes ends. */
class TextWithBytes {
  private parts: string[] = [];
  private bytes: number[] = [];
  length = 0;
  add(s: string) {
    if (this.bytes.length) this.flush();
    this.parts.push(s);
    this.length += s.length;
  }
  byte(b: number) {
    this.bytes.push(b & 0xff);
    this.length++;
  }
  private flush() {
    this.parts.push(Buffer.from(this.bytes).toString("utf8"));
    this.bytes = [];
  }
  text(): string {
    if (this.bytes.length) this.flush();
    return this.parts.join("");
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

/**
 * One backslash escape of `s` at `i` (the character after the backslash) into `out`; answers the
 * index after it. `unicode`: E'' strings' \uXXXX and \UXXXXXXXX too (COPY has none).
 */
function unescapeAt(s: string, i: number, out: TextWithBytes, unicode: boolean): number {
  const c = s[i]!;
  const simple = SIMPLE_ESCAPES[c];
  if (simple !== undefined) {
    out.add(simple);
    return i + 1;
  }
  if (c >= "0" && c <= "7") {
    const m = /^[0-7]{1,3}/.exec(s.slice(i, i + 3))![0];
    out.byte(parseInt(m, 8));
    return i + m.length;
  }
  if (c === "x") {
    const m = /^[0-9A-Fa-f]{1,2}/.exec(s.slice(i + 1, i + 3));
    if (m) {
      out.byte(parseInt(m[0], 16));
      return i + 1 + m[0].length;
    }
  }
  if (unicode && (c === "u" || c === "U")) {
    const n = c === "u" ? 4 : 8;
    const hex = s.slice(i + 1, i + 1 + n);
    const code = /^[0-9A-Fa-f]+$/.test(hex) && hex.length === n ? parseInt(hex, 16) : NaN;
    if (code <= 0x10ffff) {
      out.add(String.fromCodePoint(code));
      return i + 1 + n;
    }
  }
  out.add(c);
  return i + 1;
}

/** A COPY text-format field: `\N` is NULL, backslash escapes are decoded. */
export function copyField(field: string): DumpValue {
  if (field === "\\N") return null;
  if (!field.includes("\\")) return field;
  const out = new TextWithBytes();
  let i = 0;
  while (i < field.length) {
    const at = field.indexOf("\\", i);
    if (at < 0 || at === field.length - 1) {
      out.add(field.slice(i));
      break;
    }
    if (at > i) out.add(field.slice(i, at));
    i = unescapeAt(field, at + 1, out, false);
  }
  return out.text();
}

/**
 * SQL's tokens, fed a line at a time (its newline included, as strings may hold it): words (bare
 * names, keywords, numbers, operators), '…' and E'…' strings and $tag$ strings (their text), "…"
 * identifiers, and ( ) , ; — comments dropped. The text of strings and identifiers is gathered only
 * while `keep` is set, and no more than `max` characters of one.
 */
export class SqlScanner {
  mode: Mode = "normal";
  /** backslash escapes in '…' strings (standard_conforming_strings off) */
  escapesInStrings = false;
  keep = true;
  /** set by the reader when a token ends what this line holds for it (a COPY's header): the rest of the line is left */
  stopLine = false;
  private word = "";
  private wordLine = 0;
  private text = new TextWithBytes();
  private textLine = 0;
  private tag = "";
  private depth = 0;

  constructor(
    private readonly emit: (token: Token) => void,
    private readonly max: number,
  ) {}

  /** where the string, identifier or comment left open starts */
  get openSince(): number {
    return this.textLine;
  }

  private endWord() {
    if (!this.word) return;
    const word = this.word;
    this.word = "";
    this.emit({ t: "word", v: word, line: this.wordLine });
  }

  private append(s: string) {
    if (!this.keep || !s) return;
    if (this.text.length + s.length > this.max)
      throw new SourceFailure(`line ${this.textLine}`, `not read: a value longer than ${this.max} characters`);
    this.text.add(s);
  }

  private open(mode: Mode, line: number) {
    this.mode = mode;
    this.text = new TextWithBytes();
    this.textLine = line;
  }

  private close(t: "string" | "ident") {
    this.mode = "normal";
    this.emit({ t, v: this.keep ? this.text.text() : "", line: this.textLine });
    this.text = new TextWithBytes();
  }

  feed(s: string, line: number): void {
    this.stopLine = false;
    let i = 0;
    const n = s.length;
    while (i < n && !this.stopLine) {
      switch (this.mode) {
        case "normal": {
          WORD_RUN.lastIndex = i;
          const run = WORD_RUN.exec(s);
          if (run) {
            if (!this.word) this.wordLine = line;
            this.word += run[0];
            i += run[0].length;
            continue;
          }
          const c = s[i]!;
          const next = s[i + 1];
          if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") {
            this.endWord();
            i++;
          } else if (c === "-" && next === "-") {
            this.endWord();
            i = n;
          } else if (c === "/" && next === "*") {
            this.endWord();
            this.open("comment", line);
            this.depth = 1;
            i += 2;
          } else if (c === "'") {
            const e = this.word === "E" || this.word === "e";
            if (e) this.word = "";
            else this.endWord();
            this.open(e || this.escapesInStrings ? "escaped" : "string", line);
            i++;
          } else if (c === '"') {
            this.endWord();
            this.open("ident", line);
            i++;
          } else if (c === "(" || c === ")" || c === "," || c === ";") {
            this.endWord();
            this.emit({ t: "punct", v: c, line });
            i++;
          } else {
            DOLLAR.lastIndex = i;
            const dollar = c === "$" && !this.word ? DOLLAR.exec(s) : null;
            if (dollar) {
              this.open("dollar", line);
              this.tag = dollar[0];
              i += dollar[0].length;
            } else {
              // a lone - / or $ (an operator, a number's sign, a parameter)
              if (!this.word) this.wordLine = line;
              this.word += c;
              i++;
            }
          }
          break;
        }
        case "string":
        case "ident": {
          const quote = this.mode === "string" ? "'" : '"';
          const at = s.indexOf(quote, i);
          if (at < 0) {
            this.append(s.slice(i));
            i = n;
          } else if (s[at + 1] === quote) {
            this.append(s.slice(i, at + 1));
            i = at + 2;
          } else {
            this.append(s.slice(i, at));
            i = at + 1;
            this.close(this.mode);
          }
          break;
        }
        case "escaped": {
          ESCAPED_STOP.lastIndex = i;
          const stop = ESCAPED_STOP.exec(s);
          if (!stop) {
            this.append(s.slice(i));
            i = n;
            break;
          }
          const at = stop.index;
          this.append(s.slice(i, at));
          if (s[at] === "\\") {
            if (at + 1 >= n) {
              i = n;
              break;
            }
            i = unescapeAt(s, at + 1, this.keep ? this.text : new TextWithBytes(), true);
            if (this.text.length > this.max)
              throw new SourceFailure(`line ${this.textLine}`, `not read: a value longer than ${this.max} characters`);
          } else if (s[at + 1] === "'") {
            this.append("'");
            i = at + 2;
          } else {
            i = at + 1;
            this.close("string");
          }
          break;
        }
        case "dollar": {
          const at = s.indexOf(this.tag, i);
          if (at < 0) {
            this.append(s.slice(i));
            i = n;
          } else {
            this.append(s.slice(i, at));
            i = at + this.tag.length;
            this.close("string");
          }
          break;
        }
        case "comment": {
          COMMENT_MARK.lastIndex = i;
          const mark = COMMENT_MARK.exec(s);
          if (!mark) {
            i = n;
            break;
          }
          this.depth += mark[0] === "/*" ? 1 : -1;
          i = mark.index + 2;
          if (this.depth === 0) this.mode = "normal";
          break;
        }
      }
    }
    // a word never goes on past a line's end: the newline ends it
    if (!this.stopLine && this.mode === "normal") this.endWord();
  }
}

/** A name as SQL folds it: a bare word in lower case, a "quoted" one as written. */
export const nameOf = (token: Token) => (token.t === "ident" ? token.v : token.v.toLowerCase());

/** `<schema>.<table>` from its tokens (`public.pages`, `"public"."pages"`, `pages`). */
export function qualifiedName(tokens: readonly Token[]): { schema: string | null; table: string } | null {
  const parts: string[] = [];
  for (const token of tokens) {
    if (token.t === "ident") parts.push(token.v);
    else if (token.t === "word")
      parts.push(
        ...token.v
          .split(".")
          .filter(Boolean)
          .map((p) => p.toLowerCase()),
      );
    else return null;
  }
  if (!parts.length) return null;
  return { schema: parts.length > 1 ? parts[parts.length - 2]! : null, table: parts[parts.length - 1]! };
}

export const isWord = (token: Token | undefined, ...words: string[]) => token?.t === "word" && words.includes(token.v.toUpperCase());

/** the words of a table's definition that begin a constraint, not a column */
export const CONSTRAINT_WORDS = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "EXCLUDE", "LIKE"];

/** A CREATE TABLE's name and its columns in order (its constraints left out). */
export function createdTable(tokens: readonly Token[]): { name: { schema: string | null; table: string }; columns: string[] } {
  const open = tokens.findIndex((token) => token.t === "punct");
  const words = tokens.slice(1, open);
  const name = qualifiedName(
    words.slice(words.findIndex((token) => isWord(token, "TABLE")) + 1).filter((token) => !isWord(token, "IF", "NOT", "EXISTS")),
  )!;
  const columns: string[] = [];
  let depth = 0;
  let expectName = true;
  for (const token of tokens.slice(open + 1)) {
    if (token.t === "punct") {
      if (token.v === "(") depth++;
      else if (token.v === ")") depth--;
      else if (token.v === "," && depth === 0) expectName = true;
      if (depth < 0) break;
      continue;
    }
    if (expectName && depth === 0) {
      expectName = false;
      if (!isWord(token, ...CONSTRAINT_WORDS)) columns.push(nameOf(token));
    }
  }
  return { name, columns };
}

/**
 * `COPY <name> [(<columns>)] FROM stdin`: the table's name and the columns it names (null: none);
 * null for another COPY (from a file, to stdout), whose rows are not in the dump.
 */
export function copyHeader(
  tokens: readonly Token[],
): { name: { schema: string | null; table: string } | null; named: string[] | null } | null {
  const from = tokens.findIndex((token) => isWord(token, "FROM"));
  if (from < 0 || !isWord(tokens[from + 1], "STDIN")) return null;
  const open = tokens.findIndex((token) => token.t === "punct" && token.v === "(");
  const nameEnd = open >= 0 && open < from ? open : from;
  const named =
    open >= 0 && open < from
      ? tokens
          .slice(open + 1, from)
          .filter((token) => token.t !== "punct")
          .map(nameOf)
      : null;
  return { name: qualifiedName(tokens.slice(1, nameEnd)), named };
}
