// Which format a file is, from its first characters: our NDJSON export starts with a JSON object,
// a Disqus export's root element is <disqus>, a WordPress export (WXR) is an <rss> that names the
// WordPress export namespace. src/modules/portability/engine/importer.ts refuses a file whose format is
// not the one asked for.
import type { ImportFormat } from "./source.js";

/** what is read of a file to tell its format */
const HEAD_CHARS = 16 * 1024;

export const FORMAT_NAMES: Record<ImportFormat, string> = {
  disqus: "a Disqus export",
  wordpress: "a WordPress export (WXR)",
  ndjson: "an NDJSON export of this service",
};

/** The format `head` (a file's start) is, or null when it is none of them (or cannot tell yet). */
export function formatOf(head: string): ImportFormat | null {
  const text = head.replace(/^[\s\uFEFF]+/, "");
  if (text.startsWith("{")) return "ndjson";
  if (!text.startsWith("<")) return null;
  // the root element: the first tag that is not a declaration, a comment, a doctype or an instruction
  const body = text.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<![A-Za-z][^>]*>/g, "").trimStart();
  const root = /^<([A-Za-z_][\w.:-]*)/.exec(body)?.[1];
  if (root === "disqus") return "disqus";
  if (root === "rss" && /wordpress\.org\/export\//.test(text)) return "wordpress";
  return null;
}

/**
 * Reads the start of `input` (HEAD_CHARS characters, or all of it when shorter) and answers its
 * format with a stream that yields the whole input again.
 */
export async function sniffFormat(
  input: AsyncIterable<Uint8Array | string>,
): Promise<{ format: ImportFormat | null; stream: AsyncIterable<Uint8Array | string> }> {
  const iterator = input[Symbol.asyncIterator]();
  const head: (Uint8Array | string)[] = [];
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let done = false;
  while (text.length < HEAD_CHARS) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head.push(next.value);
    text += typeof next.value === "string" ? next.value : decoder.decode(next.value, { stream: true });
  }
  const stream = (async function* () {
    yield* head;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
  return { format: formatOf(text), stream };
}
