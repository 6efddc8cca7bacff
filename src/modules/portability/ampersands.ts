// Finds a `&` that does not start a reference (`&name;`, `&#10;`, `&#xA;`) in XML text outside
// CDATA sections, comments and processing instructions, chunk by chunk. saxes reads everything up
// to the next `;` as the entity's name, so it reports a bare `&` where that `;` is, or at the end of
// the file; src/modules/portability/xml-reader.ts asks this scanner first and reports it where it
// stands.

/** a reference as XML allows it, seen from its `&` */
const REFERENCE = /^&(?:[A-Za-z_:][\w.:-]*|#[0-9]+|#x[0-9A-Fa-f]+);/;
/** the longest reference looked for: a longer name is a bare `&` */
const LOOKAHEAD = 64;

type State = "text" | "cdata" | "comment" | "pi";
const ENDS: Record<Exclude<State, "text">, string> = { cdata: "]]>", comment: "-->", pi: "?>" };
const OPENINGS: [string, State][] = [
  ["<![CDATA[", "cdata"],
  ["<!--", "comment"],
  ["<?", "pi"],
];

export interface BareAmpersand {
  /** where it is in the chunk just given (0 when it was in the end of the one before) */
  index: number;
  line: number;
  /** 1-based */
  column: number;
}

export class AmpersandScanner {
  private state: State = "text";
  /** the end of the last chunk, not decided yet */
  private carry = "";
  private line = 1;
  /** characters of the current line before `carry` */
  private column = 0;

  /** The first bare `&` of `chunk` (with what was carried), or null; `final`: the input ends here. */
  scan(chunk: string, final = false): BareAmpersand | null {
    const buf = this.carry + chunk;
    let i = 0;
    let stop = buf.length;
    while (i < buf.length) {
      if (this.state !== "text") {
        const end = buf.indexOf(ENDS[this.state], i);
        if (end < 0) {
          stop = Math.max(i, buf.length - 2);
          break;
        }
        i = end + ENDS[this.state].length;
        this.state = "text";
        continue;
      }
      const lt = buf.indexOf("<", i);
      const amp = buf.indexOf("&", i);
      const j = lt < 0 ? amp : amp < 0 ? lt : Math.min(lt, amp);
      if (j < 0) break;
      if (!final && buf.length - j < (buf[j] === "&" ? LOOKAHEAD : 9)) {
        stop = j;
        break;
      }
      if (buf[j] === "<") {
        const opening = OPENINGS.find(([text]) => buf.startsWith(text, j));
        if (opening) this.state = opening[1];
        i = j + (opening ? opening[0].length : 1);
      } else if (REFERENCE.test(buf.slice(j, j + LOOKAHEAD))) {
        i = j + 1;
      } else {
        this.advance(buf, 0, j);
        return { index: Math.max(0, j - this.carry.length), line: this.line, column: this.column + 1 };
      }
    }
    this.advance(buf, 0, stop);
    this.carry = buf.slice(stop);
    return null;
  }

  /** counts the lines and columns of buf[from, to) */
  private advance(buf: string, from: number, to: number) {
    const nl = buf.lastIndexOf("\n", to - 1);
    if (nl < from) {
      this.column += to - from;
      return;
    }
    for (let k = buf.indexOf("\n", from); k >= 0 && k < to; k = buf.indexOf("\n", k + 1)) this.line++;
    this.column = to - nl - 1;
  }
}
