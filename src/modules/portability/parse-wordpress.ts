// A WordPress export (WXR), read as a stream (src/modules/portability/xml-reader.ts): each <item>
// with comments is a thread (<wp:post_id>, <wp:post_name> as its identifier, <link>, <title>,
// <wp:post_date_gmt>, else <wp:post_date> when that is zero or absent), announced at its first <wp:comment>; each <wp:comment> of a kind people write
// (comment_type empty or "comment"; pingbacks and trackbacks are left out) is a post: comment_id,
// comment_parent (0 = none), comment_author, comment_author_email, comment_date_gmt,
// comment_content, comment_approved (1 approved, 0 pending, spam rejected, trash deleted). Authors
// become readers `wp:<hash of the email>` (or `wp:name-<hash of the name>` without one); the email
// itself is not kept.
import { childText, readXml, type XmlNode } from "./xml-reader.js";
import type { CommentStatus } from "../../generated/prisma/enums.js";
import { emailOf, htmlToText, outOfRangeDate, parseSourceDate, sha256Hex, type SourceItem } from "./source.js";

/** an item's fields the thread needs; its content and other metadata are dropped as they close */
const ITEM_FIELDS = new Set(["title", "link", "wp:post_id", "wp:post_name", "wp:post_date_gmt", "wp:post_date"]);

const STATUS: Record<string, CommentStatus> = {
  "1": "approved",
  approve: "approved",
  "0": "pending",
  hold: "pending",
  spam: "rejected",
  trash: "deleted",
  "post-trashed": "deleted",
};

export function parseWordpress(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  return readXml(
    input,
    (node, stack) => {
      const parent = stack[stack.length - 1];
      if (node.name !== "wp:comment" || parent?.name !== "item") return undefined;
      const out: SourceItem[] = [];
      if (!parent.emitted) {
        parent.emitted = true;
        out.push(thread(parent));
      }
      const c = comment(node, threadKeyOf(parent));
      if (c) out.push(c);
      return out;
    },
    (node, stack) => {
      const parent = stack[stack.length - 1];
      if (stack.some((s) => s.name === "wp:comment")) return true;
      return parent?.name === "item" && ITEM_FIELDS.has(node.name);
    },
  );
}

const threadKeyOf = (item: XmlNode) => childText(item, "wp:post_id") || childText(item, "link") || item.position;

function thread(item: XmlNode): SourceItem {
  const postId = childText(item, "wp:post_id");
  const createdAt = parseSourceDate(childText(item, "wp:post_date_gmt")) ?? parseSourceDate(childText(item, "wp:post_date"));
  const late = outOfRangeDate({ "<wp:post_date_gmt>": createdAt });
  if (late) return { kind: "error", position: item.position, message: `<item> ${postId ?? ""}: ${late}` };
  return {
    kind: "thread",
    key: threadKeyOf(item),
    identifier: childText(item, "wp:post_name") || postId || null,
    url: childText(item, "link") || null,
    title: childText(item, "title") || null,
    createdAt,
    position: item.position,
  };
}

function comment(n: XmlNode, threadKey: string): SourceItem | null {
  const key = childText(n, "wp:comment_id");
  const bad = (message: string): SourceItem => ({ kind: "error", position: n.position, message: `<wp:comment> ${key ?? ""}: ${message}` });
  if (!key) return bad("no <wp:comment_id>");
  const type = childText(n, "wp:comment_type") ?? "";
  if (type !== "" && type !== "comment") return null;
  const approved = childText(n, "wp:comment_approved") ?? "1";
  const status = STATUS[approved];
  if (!status) return bad(`<wp:comment_approved> is "${approved}" (1, 0, spam or trash)`);
  const createdAt = parseSourceDate(childText(n, "wp:comment_date_gmt")) ?? parseSourceDate(childText(n, "wp:comment_date"));
  if (!createdAt) return bad("<wp:comment_date_gmt> is missing or not a date");
  const late = outOfRangeDate({ "<wp:comment_date_gmt>": createdAt });
  if (late) return bad(late);
  const body = status === "deleted" ? "" : htmlToText(childText(n, "wp:comment_content") ?? "");
  if (status !== "deleted" && !body) return bad("<wp:comment_content> is empty");
  const name = childText(n, "wp:comment_author") || "";
  const email = (childText(n, "wp:comment_author_email") ?? "").toLowerCase();
  const parent = childText(n, "wp:comment_parent");
  return {
    kind: "post",
    key,
    threadKey,
    parentKey: parent && parent !== "0" ? parent : null,
    author: {
      id: email ? `wp:${sha256Hex(email).slice(0, 16)}` : `wp:name-${sha256Hex(name || "anonymous").slice(0, 16)}`,
      name: (name || "Anonymous").slice(0, 200),
      email: emailOf(email),
    },
    body,
    status,
    pinned: false,
    createdAt,
    editedAt: null,
    deletedAt: status === "deleted" ? createdAt : null,
    position: n.position,
  };
}
