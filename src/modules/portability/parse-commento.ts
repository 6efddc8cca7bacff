// A Commento or Commento++ export (the dashboard's "Export data": json.Marshal of
// {"version":1,"comments":[…],"commenters":[…]}, downloaded gzipped: decompress.ts expands it),
// read as a stream (json-reader.ts). Each comment: commentHex, domain and url (its page: a thread,
// announced at its first comment, `https://<domain><url>`), commenterHex ("anonymous" for a guest),
// markdown, parentHex ("root" for none), score (up minus down votes), state (approved, unapproved:
// pending, flagged: rejected by the spam filter), creationDate and deleted (Commento keeps a
// deleted comment's row as "[deleted]": it comes as status deleted, which the importer skips and
// counts). Commenters (commenterHex, name, email, photo, joinDate) become readers
// `commento:<commenterHex>`; they come after the comments in the file, so a comment names its
// reader provisionally and shows the reader's name.
import type { CommentStatus } from "../../generated/prisma/enums.js";
import { readJson } from "./json-reader.js";
import { asObject, idOf, textOf, votesOfScore } from "./record-fields.js";
import { emailOf, outOfRangeDate, parseSourceDate, type SourceItem } from "./source.js";

const STATES: Record<string, CommentStatus> = { approved: "approved", unapproved: "pending", flagged: "rejected" };

export async function* parseCommento(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  const seen = new Set<string>();
  let version = false;
  let end = "line 1, column 1 (byte 0)";
  for await (const r of readJson(input, { paths: ["$.version", "$.comments.*", "$.commenters.*"], recordDepth: 3 })) {
    if (r.kind === "error") {
      yield r;
      return;
    }
    end = r.position;
    const [list] = r.path;
    if (list === "version") {
      version = true;
      continue;
    }
    const record = asObject(r.value);
    if (list === "commenters") {
      const hex = idOf(record?.commenterHex);
      if (!record || !hex) {
        yield { kind: "error", position: r.position, message: "a commenter without a commenterHex" };
        continue;
      }
      const joined = parseSourceDate(textOf(record.joinDate));
      const late = outOfRangeDate({ joinDate: joined });
      if (late) {
        yield { kind: "error", position: r.position, message: `commenter ${hex}: ${late}` };
        continue;
      }
      yield {
        kind: "reader",
        id: `commento:${hex}`.slice(0, 255),
        name: (textOf(record.name)?.trim() || "Anonymous").slice(0, 200),
        avatarUrl: textOf(record.photo),
        email: emailOf(textOf(record.email)),
        createdAt: joined,
        position: r.position,
      };
      continue;
    }
    const item = comment(record, r.position);
    if (item.kind === "post" && !seen.has(item.threadKey)) {
      seen.add(item.threadKey);
      const [domain, ...path] = item.threadKey.split("\u0000");
      const page = path.join("");
      yield {
        kind: "thread",
        key: item.threadKey,
        identifier: domain ? null : page,
        url: domain ? `https://${domain}${page.startsWith("/") ? "" : "/"}${page}` : null,
        title: null,
        createdAt: item.createdAt,
        position: r.position,
      };
    }
    yield item;
  }
  if (!version) yield { kind: "error", position: end, message: 'not a Commento export: no "version" member', fatal: true };
}

function comment(r: Record<string, unknown> | null, position: string): SourceItem {
  const key = idOf(r?.commentHex);
  const bad = (message: string): SourceItem => ({ kind: "error", position, message: `comment ${key ?? ""}: ${message}` });
  if (!r || !key) return bad("no commentHex");
  const domain = textOf(r.domain)?.trim() ?? "";
  const url = textOf(r.url)?.trim() ?? "";
  if (!domain && !url) return bad("no domain or url");
  const createdAt = parseSourceDate(textOf(r.creationDate));
  if (!createdAt) return bad("creationDate is missing or not a date");
  const late = outOfRangeDate({ creationDate: createdAt });
  if (late) return bad(late);
  const deleted = r.deleted === true;
  const state = textOf(r.state) ?? "approved";
  const status = STATES[state];
  if (!status) return bad(`state is "${state}" (approved, unapproved or flagged)`);
  const body = deleted ? "" : (textOf(r.markdown) ?? "").trim();
  if (!deleted && !body) return bad("its markdown is empty");
  const commenter = idOf(r.commenterHex) ?? "anonymous";
  const parent = idOf(r.parentHex);
  return {
    kind: "post",
    key,
    threadKey: `${domain}\u0000${url}`,
    parentKey: parent && parent !== "root" ? parent : null,
    author:
      commenter === "anonymous"
        ? { id: "commento:anonymous", name: "Anonymous" }
        : { id: `commento:${commenter}`.slice(0, 255), name: "Anonymous", provisional: true },
    shownName: null,
    body,
    status: deleted ? "deleted" : status,
    pinned: false,
    createdAt,
    editedAt: null,
    deletedAt: deleted ? createdAt : null,
    ...votesOfScore(r.score),
    position,
  };
}
