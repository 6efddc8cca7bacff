// Streaming JSON for the Commento, GitHub, generic JSON, Artalk and Twikoo readers
// (parse-commento.ts, parse-github.ts, parse-json.ts, parse-artalk.ts, parse-twikoo.ts):
// @streamparser/json's tokenizer reads the file chunk by chunk and its token parser builds only the
// records asked for (`paths`, e.g. `$.comments.*`), each dropped once handed on, so memory holds one
// chunk's records, never the file. Several documents one after the other (`[…][…]`, as `gh api
// --paginate` writes pages; `{…}\n{…}`, one document a line) are read when `multiple` says so.
//
// What one file may make it hold is bounded (JSON_LIMITS): containers nested deeper than `depth`,
// a record of more than `recordValues` values, or one token (a string, a number) longer than
// `piece` bytes ends the file with a fatal error at its position. So does JSON that is not
// well-formed, at the byte where it goes wrong (and its line and column), and a file that ends
// inside a value (truncated). A record's position is where it starts.
import { TokenParser, Tokenizer, TokenType } from "@streamparser/json";
import type { SourceError } from "./source.js";

export const JSON_LIMITS = {
  depth: 64,
  piece: 8 * 1024 * 1024,
  recordValues: 100_000,
} as const;

export interface JsonRecord {
  kind: "record";
  value: unknown;
  /** the keys from the document's root to the record (`["comments", 3]`, `[0]`; `[]`: a document itself) */
  path: (string | number)[];
  position: string;
}

export interface JsonReadOptions {
  /** what to hand on, as @streamparser/json's paths (`$.*`, `$.comments.*`; `$`: each document) */
  paths: string[];
  /** the depth of a record's own container (the root's is 1): its values count toward recordValues */
  recordDepth: number;
  /** documents one after the other (`[…][…]`) */
  multiple?: boolean;
}

const bytesOf = (chunk: Uint8Array | string): Uint8Array => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);

export async function* readJson(
  input: AsyncIterable<Uint8Array | string>,
  opts: JsonReadOptions,
): AsyncGenerator<JsonRecord | SourceError> {
  const tokenizer = new Tokenizer({ ...(opts.multiple ? { separator: "" } : {}) });
  const parser = new TokenParser({ paths: opts.paths, keepStack: false, ...(opts.multiple ? { separator: "" } : {}) });
  let out: JsonRecord[] = [];
  let failed: SourceError | null = null;

  // where lines start, for positions: the current chunk and how far into it newlines were counted
  let chunk: Uint8Array = new Uint8Array(0);
  let base = 0;
  let scanned = 0;
  let line = 1;
  let lineStart = 0;
  const scanTo = (offset: number) => {
    const end = Math.min(offset, base + chunk.byteLength);
    for (let at = scanned; at < end;) {
      const nl = chunk.indexOf(10, at - base);
      if (nl < 0 || base + nl >= end) break;
      line++;
      lineStart = base + nl + 1;
      at = lineStart;
    }
    scanned = Math.max(scanned, end);
  };
  const positionOf = (offset: number) => {
    if (offset >= scanned) scanTo(offset);
    return `line ${line}, column ${offset - lineStart + 1} (byte ${offset})`;
  };

  let depth = 0;
  let lastOffset = 0;
  let lastTokenEnd = 0;
  let recordStart = "";
  let recordValues = 0;
  const fail = (offset: number, message: string) => {
    failed ??= { kind: "error", position: positionOf(offset), message, fatal: true };
  };

  tokenizer.onToken = (info) => {
    if (failed) return;
    const { token, offset } = info;
    lastOffset = offset;
    lastTokenEnd = offset + 1;
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      depth++;
      if (depth > JSON_LIMITS.depth) return fail(offset, `not read: JSON nested deeper than ${JSON_LIMITS.depth}`);
      if (depth === opts.recordDepth) {
        recordStart = positionOf(offset);
        recordValues = 0;
      }
    }
    if (depth >= opts.recordDepth && ++recordValues > JSON_LIMITS.recordValues)
      return fail(offset, `not read: a record of more than ${JSON_LIMITS.recordValues} values (it starts at ${recordStart})`);
    parser.write(info);
    if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth--;
  };
  // a document itself is handed on only when asked for (`$`: one document a line, as Twikoo's)
  const roots = opts.paths.includes("$");
  parser.onValue = ({ value, key, stack }) => {
    if (failed || (key === undefined && !roots)) return;
    const path = key === undefined ? [] : [...stack.slice(1).map((s) => s.key as string | number), key];
    const position =
      stack.length + 1 === opts.recordDepth && typeof value === "object" && value !== null ? recordStart : positionOf(lastOffset);
    out.push({ kind: "record", value, path, position });
  };
  parser.onError = (err) => fail(lastOffset, `not well-formed JSON: ${err.message.replace(/ in state \w+$/, "")}`);
  tokenizer.onError = (err) => {
    const at = /absolute position "(\d+)"/.exec(err.message);
    const what = /^Unexpected "([^"]*)"/.exec(err.message)?.[1];
    if (at) fail(Number(at[1]), `not well-formed JSON: unexpected ${what === undefined ? "character" : JSON.stringify(what)}`);
    else fail(base + chunk.byteLength, "the file ends inside a JSON value: it is truncated");
  };
  parser.onEnd = () => undefined;
  tokenizer.onEnd = () => {
    if (failed || parser.isEnded) return;
    // a file that ends inside a value is cut short, whatever the parser would say of it
    if (depth > 0) fail(base + chunk.byteLength, "the file ends inside a JSON value: it is truncated");
    else parser.end();
  };

  let total = 0;
  for await (const raw of input) {
    const bytes = bytesOf(raw);
    scanTo(base + chunk.byteLength);
    base = total;
    chunk = bytes;
    total += bytes.byteLength;
    try {
      tokenizer.write(bytes);
    } catch (err) {
      tokenizer.onError(err as Error);
    }
    if (!failed && total - lastTokenEnd > JSON_LIMITS.piece)
      fail(lastTokenEnd, `not read: a string or number longer than ${JSON_LIMITS.piece} bytes`);
    if (out.length) {
      const records = out;
      out = [];
      yield* records;
    }
    if (failed) {
      yield failed;
      return;
    }
  }
  if (total === 0 || (depth === 0 && lastTokenEnd === 0)) {
    yield { kind: "error", position: "line 1, column 1 (byte 0)", message: "the file is empty", fatal: true };
    return;
  }
  try {
    tokenizer.end();
  } catch (err) {
    tokenizer.onError(err as Error);
  }
  if (!failed && depth > 0) fail(total, "the file ends inside a JSON value: it is truncated");
  yield* out;
  if (failed) yield failed;
}

/** A record that is a JSON object, as a format's reader takes it (readJsonObjects). */
export interface JsonObjectRecord {
  kind: "object";
  value: Record<string, unknown>;
  position: string;
}

/**
 * The records of a file whose records are JSON objects (Artalk, GitHub, Twikoo): a reading error
 * ends the file; with `notAList`, a record that is not an array's item (the file is one object
 * where a list was expected) ends it with that message; a record that is not an object is a bad
 * record (`notAnObject`), and the rest are handed on.
 */
export async function* readJsonObjects(
  input: AsyncIterable<Uint8Array | string>,
  opts: JsonReadOptions & { notAList?: string; notAnObject?: string },
): AsyncGenerator<JsonObjectRecord | SourceError> {
  for await (const r of readJson(input, opts)) {
    if (r.kind === "error") {
      yield r;
      return;
    }
    if (opts.notAList !== undefined && typeof r.path[0] !== "number") {
      yield { kind: "error", position: r.position, message: opts.notAList, fatal: true };
      return;
    }
    const value = typeof r.value === "object" && r.value !== null && !Array.isArray(r.value) ? (r.value as Record<string, unknown>) : null;
    if (!value) {
      yield { kind: "error", position: r.position, message: opts.notAnObject ?? "not an object" };
      continue;
    }
    yield { kind: "object", value, position: r.position };
  }
}
