// The links of a Markdown file that leave the repository: a link's target, or a relative path named
// in the text (`../elsewhere/FILE.md`), that resolves outside the repository's root from the file's
// folder; and a path named in the text that goes up to nothing the repository has (written from
// the root: `../shared/FILE.md` in docs/). The docs stand alone: what they point at is in the repository (or on the web, by URL), never
// a file beside it. Used by scripts/check-references.ts.
import { posix } from "node:path";

export interface OutsideLink {
  line: number;
  target: string;
}

/** `[text](target)` and `[label]: target` link targets; URLs with a scheme and anchors are not files. */
const LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g;
/** a relative path that goes up, named anywhere in the text (in code spans too) */
const UPWARD = /(?<![\w./-])((?:\.\.\/)+[\w.-][\w./-]*)/g;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Where `target` leads from `file` (both relative to the repository's root), or null for a URL or an anchor. */
function resolve(file: string, target: string): string | null {
  if (SCHEME.test(target) || target.startsWith("#") || target.startsWith("/")) return null;
  const path = target.split(/[?#]/)[0]!;
  if (path === "") return null;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* a malformed escape: judged as written */
  }
  return posix.normalize(posix.join(posix.dirname(file), decoded));
}

const outside = (resolved: string | null) => resolved !== null && (resolved === ".." || resolved.startsWith("../"));

/**
 * Every link or upward path of a Markdown file (`file` relative to the repository's root) that leaves
 * the repository; `exists` says whether the repository has a path (relative to its root).
 */
export function linksLeavingRepo(file: string, text: string, exists: (path: string) => boolean = () => true): OutsideLink[] {
  const out: OutsideLink[] = [];
  text.split("\n").forEach((line, i) => {
    const found = new Set<string>();
    for (const m of line.matchAll(LINK)) if (outside(resolve(file, (m[1] ?? m[2])!))) found.add((m[1] ?? m[2])!);
    // the text beside the links: a link's target is judged once, above
    for (const m of line.replace(LINK, " ").matchAll(UPWARD)) {
      const resolved = resolve(file, m[1]!);
      if (outside(resolved) || (resolved !== null && !exists(resolved))) found.add(m[1]!);
    }
    for (const target of found) out.push({ line: i + 1, target });
  });
  return out;
}
