// Independent readings of the files other comment systems write, for the import-more tests
// (test/import-more*.test.ts): written from each format's documentation and the systems' code named
// in ../shared/fixtures/import-more/SOURCES.txt, not from the importer's. What they expect of an
// import is what docs/import.md says: comment ids, discussion ids from URLs and paths, HTML as
// text, a deleted comment skipped and its replies hung from its parent.
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { parseFragment, type DefaultTreeAdapterMap } from "parse5";
import { expect } from "vitest";
import type { TestServer } from "./server.js";
import type { TestTenant } from "./fixtures.js";
import { importFinished, postImport } from "./imports.js";

/** ../shared/fixtures/import-more, where CI has it too (never copied into the repository) */
export const MORE = fileURLToPath(new URL("../../../shared/fixtures/import-more/", import.meta.url));
export const IMPORT_FIXTURES = fileURLToPath(new URL("../../../shared/fixtures/import/", import.meta.url));

/** docs/import.md "Ids": an imported comment's id */
/**
 * docs/import.md "Ids": an imported comment's id; of a source numbered per database (isso,
 * WordPress, Artalk) named by its discussion too, and without it (`discussionId` left out) the id an
 * earlier version gave it
 */
export const commentIdOf = (tenantId: string, format: string, sourceId: string, discussionId?: string) =>
  `cmt_i${createHash("sha256")
    .update(`${tenantId}\u0000${format}\u0000${discussionId !== undefined ? `${discussionId}\u0000` : ""}${sourceId}`)
    .digest("hex")
    .slice(0, 24)}`;

/** the formats whose comment ids are named by discussion and source id (docs/import.md "Ids") */
const SCOPED = new Set(["isso", "wordpress", "artalk"]);

/** docs/import.md "Ids": a discussion id made of a URL (its scheme dropped) or a path */
export function discussionIdOfText(text: string, url = false): string {
  if (/^[A-Za-z0-9._:-]{1,128}$/.test(text)) return text;
  const id = (url ? text.replace(/^https?:\/\//, "") : text).replace(/[^A-Za-z0-9._:-]+/g, "-").replace(/^-+|-+$/g, "");
  // nothing left (a site's root, "/"): a hash of the text
  return id || `h-${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
}

type Node = DefaultTreeAdapterMap["childNode"];

/**
 * Comment HTML as the text docs/import.md says it becomes, read with parse5 (a tree, not the
 * importer's tokenizer): tags dropped, entities decoded, <br> a newline, a paragraph followed by a
 * blank line, a link `text (href)` (its href alone when the text is empty or the href itself).
 */
export function htmlText(html: string): string {
  const walk = (nodes: Node[]): string =>
    nodes
      .map((n) => {
        if (n.nodeName === "#text") return (n as DefaultTreeAdapterMap["textNode"]).value;
        if (!("childNodes" in n)) return "";
        const el = n as DefaultTreeAdapterMap["element"];
        const inner = walk(el.childNodes);
        if (el.nodeName === "br") return "\n";
        if (el.nodeName === "p") return `${inner}\n\n`;
        if (el.nodeName === "a") {
          const href = el.attrs.find((a) => a.name === "href")?.value;
          if (href === undefined) return inner;
          return inner.trim() && inner.trim() !== href ? `${inner} (${href})` : href;
        }
        return inner;
      })
      .join("");
  return walk(parseFragment(html.replace(/\r\n?/g, "\n")).childNodes)
    .replaceAll("\u00a0", " ")
    .replace(/\n\n\s+/g, "\n\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** `gh api --paginate` output: JSON arrays written one after the other, split where both halves parse */
export function pagesOf(text: string): unknown[][] {
  const pages: unknown[][] = [];
  let rest = text.trim();
  while (rest) {
    let cut = -1;
    for (const m of rest.matchAll(/\]\s*\[/g)) {
      try {
        pages.push(JSON.parse(rest.slice(0, m.index + 1)) as unknown[]);
        cut = m.index + 1;
        break;
      } catch {
        /* a "][" inside a string: try the next */
      }
    }
    if (cut < 0) {
      pages.push(JSON.parse(rest) as unknown[]);
      break;
    }
    rest = rest.slice(cut).trim();
  }
  return pages;
}

/** A reply's parent once the deleted comments are left out: its nearest ancestor that is not deleted. */
export function liveParentOf(parents: Map<string, string | null>, deleted: Set<string>, parent: string | null): string | null {
  while (parent !== null && deleted.has(parent)) parent = parents.get(parent) ?? null;
  return parent;
}

/** What one expects of an imported comment, checked against its row. */
export interface Expected {
  sourceId: string;
  discussionId?: string;
  parentSourceId: string | null;
  body: string;
  authorId?: string;
  authorName: string;
  status: string;
  createdAt: Date;
  editedAt?: Date | null;
  upvotes?: number;
  downvotes?: number;
  pinned?: boolean;
  reactionCounts?: Record<string, number>;
}

/** POST /api/v1/imports with the file, then the import once it ended. */
export async function importFile(server: TestServer, t: TestTenant, format: string, body: Uint8Array | string, query = "") {
  return importFinished(t, await postImport(server, t, format, body, query), 30_000);
}

/** Every comment row of the tenant against the expected ones, record by record; answers the rows by source id. */
export async function expectComments(server: TestServer, t: TestTenant, format: string, expected: Expected[]) {
  const prisma = server.app.runtime.services.prisma;
  const rows = await prisma.comment.findMany({ where: { tenantId: t.tenantId } });
  const readers = new Map((await prisma.reader.findMany({ where: { tenantId: t.tenantId } })).map((r) => [r.id, r]));
  expect(rows.length).toBe(expected.length);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const e of expected) {
    const scope = SCOPED.has(format) ? e.discussionId : undefined;
    const row = byId.get(commentIdOf(t.tenantId, format, e.sourceId, scope));
    expect(row, `comment ${e.sourceId}`).toBeDefined();
    const shownName = row!.authorName ?? readers.get(row!.authorId)?.name;
    expect(
      {
        parentId: row!.parentId,
        body: row!.body,
        authorName: shownName,
        status: row!.status,
        createdAt: row!.createdAt.toISOString(),
        ...(e.discussionId !== undefined ? { discussionId: row!.discussionId } : {}),
        ...(e.authorId !== undefined ? { authorId: row!.authorId } : {}),
        ...(e.editedAt !== undefined ? { editedAt: row!.editedAt?.toISOString() ?? null } : {}),
        ...(e.upvotes !== undefined ? { upvotes: row!.upvotes, downvotes: row!.downvotes, score: row!.score } : {}),
        ...(e.pinned !== undefined ? { pinned: row!.pinned } : {}),
        ...(e.reactionCounts !== undefined ? { reactionCounts: row!.reactionCounts } : {}),
      },
      `comment ${e.sourceId}`,
    ).toEqual({
      parentId: e.parentSourceId === null ? null : commentIdOf(t.tenantId, format, e.parentSourceId, scope),
      body: e.body,
      authorName: e.authorName,
      status: e.status,
      createdAt: new Date(Math.floor(e.createdAt.getTime())).toISOString(),
      ...(e.discussionId !== undefined ? { discussionId: e.discussionId } : {}),
      ...(e.authorId !== undefined ? { authorId: e.authorId } : {}),
      ...(e.editedAt !== undefined ? { editedAt: e.editedAt?.toISOString() ?? null } : {}),
      ...(e.upvotes !== undefined ? { upvotes: e.upvotes, downvotes: e.downvotes ?? 0, score: e.upvotes - (e.downvotes ?? 0) } : {}),
      ...(e.pinned !== undefined ? { pinned: e.pinned } : {}),
      ...(e.reactionCounts !== undefined ? { reactionCounts: e.reactionCounts } : {}),
    });
  }
  return rows;
}

/** What the tenant holds (all zero: nothing was written). */
export async function holdings(server: TestServer, t: TestTenant) {
  const prisma = server.app.runtime.services.prisma;
  const where = { tenantId: t.tenantId };
  const [discussions, readers, comments] = await Promise.all([
    prisma.discussion.count({ where }),
    prisma.reader.count({ where }),
    prisma.comment.count({ where }),
  ]);
  return { discussions, readers, comments };
}
