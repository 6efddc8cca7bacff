// Streaming XML for the Disqus and WordPress readers (parse-disqus.ts, parse-wordpress.ts): saxes
// parses the file chunk by chunk; each element becomes a small node (name, attributes, text,
// children) that lives only until the element closes, when the format's handler reads it and it is
// dropped from its parent. So memory holds the open elements and one record, never the file.
//
// What one file may make it hold is bounded (XML_LIMITS):
// - elements nested deeper than `depth`, an element with more than `attributes` attributes, or one
//   piece saxes buffers whole (a text, a CDATA section, a comment, a tag) longer than `piece`
//   characters end the file with a fatal error at its position (the import fails: no real export
//   comes near them);
// - a record (the element whose fields are kept until it closes: a Disqus <post> or <thread>, a
//   WordPress <wp:comment> or <item>) that would hold more than `recordElements` elements or
//   `recordText` characters of text is dropped at once and reported as an error at its position
//   when it closes, and the file reads on (`--on-error` decides, like any bad record).
//
// The first error of a file that is not well-formed ends it, at its position, and nothing after it
// is read: an element's close is handed on only once saxes has found nothing wrong with it (a
// mismatched close tag closes the open elements it passes, and those are not handed on). Whitespace
// and a byte order mark before the first `<` are skipped (positions still count them), and a `&`
// that does not start a reference is an error where it stands (ampersands.ts).
import { SaxesParser } from "saxes";
import { AmpersandScanner } from "./ampersands.js";
import type { SourceItem } from "./source.js";

export const XML_LIMITS = {
  depth: 64,
  attributes: 64,
  piece: 8 * 1024 * 1024,
  recordElements: 10_000,
  recordText: 1_000_000,
} as const;

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

/** An open element as the reader tracks it. */
interface Frame {
  node: XmlNode;
  /** kept in its parent when it closes (so its text is gathered) */
  kept: boolean;
  /** the record its content counts toward: the nearest ancestor that is not kept itself */
  record: Frame | null;
  /** what this record holds (its kept descendants and their text) */
  elements: number;
  chars: number;
  /** the bound this record passed: its content was dropped */
  overflow?: string;
  /** inside a record that passed a bound: nothing is kept or handed on */
  dropped: boolean;
}

/** Thrown from a handler to stop saxes at once. */
const STOP = Symbol("stop");

/**
 * Reads `input` and yields what `onClose` makes of each closed element (`stack`: its open
 * ancestors, outermost first). An element is kept in its parent only when `keep` says so (asked
 * when it opens; a record's fields until the record closes); everything else is dropped when it
 * closes, its text never gathered. Not well-formed XML ends the file with a fatal error at its
 * position, and so does passing one of the file bounds of XML_LIMITS.
 */
export async function* readXml(
  input: AsyncIterable<Uint8Array | string>,
  onClose: (node: XmlNode, stack: XmlNode[]) => SourceItem[] | undefined,
  keep: (node: XmlNode, stack: XmlNode[]) => boolean,
): AsyncGenerator<SourceItem> {
  const parser = new SaxesParser({ position: true });
  const stack: XmlNode[] = [];
  const frames: Frame[] = [];
  let out: SourceItem[] = [];
  let failed: SourceItem | null = null;
  /** all that the open records hold together */
  const held = { elements: 0, chars: 0 };
  /** characters given to saxes, and where its last event was: what lies between is buffered in it */
  let consumed = 0;
  let lastEvent = 0;
  let attributes = 0;
  /** what was skipped before the first `<`: its lines, and the columns of its last line */
  const skipped = { lines: 0, columns: 0, done: false };
  const amps = new AmpersandScanner();
  const here = () => `line ${parser.line + skipped.lines}, column ${parser.column + (parser.line === 1 ? skipped.columns : 0)}`;
  /** the close of an element, handed on at saxes' next event (a close that saxes finds wrong is not) */
  let pendingClose: (() => void) | null = null;
  const settle = () => {
    const close = pendingClose;
    pendingClose = null;
    close?.();
  };
  const fatal = (message: string): never => {
    failed ??= { kind: "error", position: here(), message, fatal: true };
    throw STOP;
  };
  const mark = () => {
    lastEvent = parser.position;
  };

  /** The record passed a bound: what it and its open descendants hold is let go. */
  const overflow = (record: Frame, reason: string) => {
    record.overflow ??= reason;
    held.elements -= record.elements;
    held.chars -= record.chars;
    record.elements = record.chars = 0;
    for (let i = frames.indexOf(record); i < frames.length; i++) {
      const f = frames[i]!;
      f.dropped = true;
      f.node.children = [];
      f.node.text = "";
    }
  };

  parser.on("opentagstart", () => {
    settle();
    attributes = 0;
  });
  parser.on("attribute", () => {
    if (++attributes > XML_LIMITS.attributes) fatal(`an element with more than ${XML_LIMITS.attributes} attributes`);
  });
  parser.on("opentag", (tag) => {
    settle();
    mark();
    if (failed) throw STOP;
    if (frames.length >= XML_LIMITS.depth) fatal(`elements nested deeper than ${XML_LIMITS.depth}`);
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) attrs[k] = typeof v === "string" ? v : v.value;
    const node: XmlNode = { name: tag.name, attrs, text: "", children: [], position: here() };
    const parent = frames[frames.length - 1];
    const dropped = parent?.dropped ?? false;
    const kept = !!parent && !dropped && keep(node, stack);
    const record = kept ? (parent.kept ? parent.record : parent) : null;
    if (parent) {
      parent.node.hasChildren = true;
      if (kept && parent.kept && parent.node.text) {
        // its text was whitespace before its first element
        parent.record!.chars -= parent.node.text.length;
        held.chars -= parent.node.text.length;
        parent.node.text = "";
      }
    }
    frames.push({ node, kept, record, elements: 0, chars: 0, dropped });
    stack.push(node);
    if (record) {
      record.elements++;
      held.elements++;
      if (record.elements > XML_LIMITS.recordElements || held.elements > XML_LIMITS.recordElements)
        overflow(record, `more than ${XML_LIMITS.recordElements} elements`);
    }
  });
  const addText = (t: string) => {
    settle();
    mark();
    const top = frames[frames.length - 1];
    // only kept leaves' text is read; an element with children keeps none: the whitespace between
    // the records of a file's root would otherwise pile up for the whole file
    if (!top || !top.kept || top.dropped || top.node.hasChildren) return;
    const record = top.record!;
    record.chars += t.length;
    held.chars += t.length;
    if (record.chars > XML_LIMITS.recordText || held.chars > XML_LIMITS.recordText)
      overflow(record, `more than ${XML_LIMITS.recordText} characters of text`);
    else top.node.text += t;
  };
  parser.on("text", addText);
  parser.on("cdata", addText);
  for (const event of ["comment", "processinginstruction", "doctype", "xmldecl"] as const)
    parser.on(event, () => {
      settle();
      mark();
    });
  parser.on("closetag", () => {
    settle();
    mark();
    pendingClose = closeElement;
  });
  const closeElement = () => {
    const frame = frames.pop();
    const node = stack.pop();
    if (!frame || !node) return;
    if (!frame.kept) {
      // a record's content goes with it
      held.elements -= frame.elements;
      held.chars -= frame.chars;
    }
    if (frame.overflow) {
      out.push({ kind: "error", position: node.position, message: `<${node.name}>: ${frame.overflow}; skipped with what it holds` });
      return;
    }
    if (frame.dropped) return;
    const made = onClose(node, stack);
    if (made) for (const item of made) out.push(item);
    const parent = stack[stack.length - 1];
    if (parent && frame.kept) {
      parent.text = "";
      parent.children.push(node);
    }
  };
  parser.on("error", (err) => {
    pendingClose = null;
    failed ??= { kind: "error", position: here(), message: `not well-formed XML: ${err.message.replace(/^\d+:\d+: /, "")}`, fatal: true };
    throw STOP;
  });
  const write = (input: string, final = false) => {
    let text = input;
    if (!skipped.done) {
      const start = text.search(/[^\s\uFEFF]/);
      const lead = start < 0 ? text : text.slice(0, start);
      const lines = lead.split(/\r\n?|\n/);
      skipped.lines += lines.length - 1;
      skipped.columns = (lines.length > 1 ? 0 : skipped.columns) + lines[lines.length - 1]!.replace(/\uFEFF/g, "").length;
      if (start < 0) return;
      skipped.done = true;
      text = text.slice(start);
    }
    const amp = amps.scan(text, final);
    try {
      // what comes before a bad `&` is read, so that an error before it is found first
      parser.write(amp ? text.slice(0, amp.index) : text);
      settle();
    } catch {
      /* reported by the error handler, or a bound was passed (STOP) */
    }
    if (amp && !failed) {
      const line = amp.line + skipped.lines;
      const column = amp.column + (amp.line === 1 ? skipped.columns : 0);
      failed = {
        kind: "error",
        position: `line ${line}, column ${column}`,
        message: "not well-formed XML: a bare & (write &amp;)",
        fatal: true,
      };
    }
    consumed += text.length;
    if (!failed && consumed - lastEvent > XML_LIMITS.piece)
      failed = {
        kind: "error",
        position: here(),
        message: `a text, CDATA section, comment or tag longer than ${XML_LIMITS.piece} characters`,
        fatal: true,
      };
  };
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of input) {
    write(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
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
  write(decoder.decode(), true);
  if (!failed) {
    try {
      parser.close();
      settle();
    } catch {
      /* reported by the error handler */
    }
  }
  yield* out;
  if (failed) yield failed;
}
