// Streaming XML for the Disqus and WordPress readers (parse-disqus.ts, parse-wordpress.ts): saxes
// parses the file chunk by chunk; each element becomes a small node (name, attributes, text,
// children) that lives only until the element closes, when the format's handler reads it and it is
// dropped from its parent. So memory holds the open elements and one record, never the file.
import { SaxesParser } from "saxes";
import type { SourceItem } from "./source.js";

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  text: string;
  children: XmlNode[];
  /** where the element starts */
  position: string;
  /** set by a handler that has already emitted something for this element (a WordPress item's thread) */
  emitted?: boolean;
  /** an element has opened inside this one (kept or not): its own text is then whitespace between elements */
  hasChildren?: boolean;
}

/** The first child named `name` (its text trimmed), or null. */
export const child = (n: XmlNode | undefined, name: string): XmlNode | undefined => n?.children.find((c) => c.name === name);
export const childText = (n: XmlNode | undefined, name: string): string | null => {
  const c = child(n, name);
  return c ? c.text.trim() : null;
};

/**
 * Reads `input` and yields what `onClose` makes of each closed element (`stack`: its open
 * ancestors, outermost first). A closed element is kept in its parent only when `keep` says so (a
 * record's fields until the record closes); everything else is dropped at once. Not well-formed XML
 * ends the file with a fatal error at its position.
 */
export async function* readXml(
  input: AsyncIterable<Uint8Array | string>,
  onClose: (node: XmlNode, stack: XmlNode[]) => SourceItem[] | undefined,
  keep: (node: XmlNode, stack: XmlNode[]) => boolean,
): AsyncGenerator<SourceItem> {
  const parser = new SaxesParser({ position: true });
  const stack: XmlNode[] = [];
  let out: SourceItem[] = [];
  let failed: SourceItem | null = null;
  const here = () => `line ${parser.line}, column ${parser.column}`;
  parser.on("opentag", (tag) => {
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) attrs[k] = typeof v === "string" ? v : v.value;
    const parent = stack[stack.length - 1];
    if (parent) parent.hasChildren = true;
    stack.push({ name: tag.name, attrs, text: "", children: [], position: here() });
  });
  const addText = (t: string) => {
    const top = stack[stack.length - 1];
    // only leaves' text matters; an element with children keeps none: the whitespace between the
    // records of a file's root would otherwise pile up for the whole file (a string of millions of pieces)
    if (top && !top.hasChildren) top.text += t;
  };
  parser.on("text", addText);
  parser.on("cdata", addText);
  parser.on("closetag", () => {
    const node = stack.pop();
    if (!node) return;
    const made = onClose(node, stack);
    if (made) for (const item of made) out.push(item);
    const parent = stack[stack.length - 1];
    if (parent && keep(node, stack)) {
      parent.text = "";
      parent.children.push(node);
    }
  });
  parser.on("error", (err) => {
    failed ??= { kind: "error", position: here(), message: `not well-formed XML: ${err.message.replace(/^\d+:\d+: /, "")}`, fatal: true };
  });
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of input) {
    try {
      parser.write(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    } catch {
      /* reported by the error handler */
    }
    if (out.length) {
      const items = out;
      out = [];
      yield* items;
    }
    if (failed) {
      yield failed;
      return;
    }
  }
  try {
    parser.write(decoder.decode());
    parser.close();
  } catch {
    /* reported by the error handler */
  }
  yield* out;
  if (failed) yield failed;
}
