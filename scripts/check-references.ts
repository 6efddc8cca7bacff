// npm run references:check (part of `npm run check`): every path that a comment, a doc or a config
// names in the repository exists (a glob matches at least one file), no Markdown file links (or names
// a relative path) outside the repository (scripts/outside-links.ts), and no comment tells history
// (which issue or session brought something): history is git's. Paths are read as the repository's tracked
// files see them, from the repository's root (or, inside console/ and embed/, from that folder).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { repoRoot } from "../src/db/paths.js";
import { linksLeavingRepo } from "./outside-links.js";

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot, encoding: "utf8" })
  .split("\n")
  .filter(Boolean)
  .filter((f) => existsSync(`${repoRoot}/${f}`));
const trackedSet = new Set(tracked);
const directories = new Set(
  tracked.flatMap((f) =>
    f
      .split("/")
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
  ),
);

/** Files whose words are read: sources, tests, docs and configs; generated code and lock files are not. */
const READ = /\.(ts|tsx|js|md|prisma|graphql|css|sql)$|^\.ci\/run$/;
const SKIP = /(^|\/)(generated|gql)\/|^prisma\/migrations\/|package-lock\.json$/;
/** A path into the repository's own folders, possibly with a glob. */
const PATH = /(?<![\w@/.$-])((?:src|test|docs|prisma|console|embed|bench|scripts)\/[\w./*{},-]*[\w*}])/g;
/** the folders with a src/ of their own, from which their files may name paths */
const OWN_ROOT = /^(console|embed)\//;
const HISTORY = /\(issues? \d+\)|\b(?:since|in|from|by|for) issue \d+\b|\bissue \d+\b(?= [a-z])/gi;

const globToRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^$()|[\]\\]/g, "\\$&")
      .replace(/\{([^}]*)\}/g, (_, alts: string) => `(${alts.split(",").join("|")})`)
      .replace(/\*\*\//g, "(.*/)?")
      .replace(/\*\*/g, ".*")
      .replace(/\*/g, "[^/]*")}$`,
  );

function exists(path: string): boolean {
  const p = path.replace(/\/$/, "").replace(/\.js$/, ".ts");
  if (/[*{]/.test(p)) {
    const re = globToRegExp(p);
    return tracked.some((f) => re.test(f)) || [...directories].some((d) => re.test(d));
  }
  return trackedSet.has(p) || directories.has(p) || trackedSet.has(path) || existsSync(`${repoRoot}/${p}`);
}

const problems: string[] = [];
for (const file of tracked) {
  if (!READ.test(file) || SKIP.test(file)) continue;
  const text = readFileSync(`${repoRoot}/${file}`, "utf8");
  if (file.endsWith(".md")) {
    for (const l of linksLeavingRepo(file, text, exists))
      problems.push(`${file}:${l.line}: links to ${l.target}, outside the repository; link a page or file inside it`);
  }
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    // a package subpath in an import statement is not a path of ours
    const words = line.replace(/\bfrom\s+["'][^"']*["']|import\(["'][^"']*["']\)/g, "");
    for (const m of words.matchAll(PATH)) {
      const path = m[1]!;
      const root = OWN_ROOT.exec(file)?.[1];
      const local = root ? `${root}/${path}` : null;
      if (!exists(path) && !(local && exists(local))) problems.push(`${file}:${i + 1}: names ${path}, which does not exist`);
    }
    for (const m of line.matchAll(HISTORY)) problems.push(`${file}:${i + 1}: tells history ("${m[0]}"); say what is, not when it came`);
  });
}

if (problems.length) {
  console.error(problems.join("\n"));
  console.error(`\n${problems.length} reference problem(s).`);
  process.exit(1);
}
console.log("Every path named in comments and docs exists, no doc links outside the repository, none tells history.");
