// The Disqus XML export, read as a stream (src/modules/portability/xml-reader.ts): each
// <thread dsq:id> (its <id> identifier, <link>, <title>, <createdAt>, <isClosed>, <isDeleted>) is a thread, each
// <post dsq:id> (<message> HTML, <createdAt>, <isDeleted>, <isSpam>, <author> with <name>,
// <username>, <email>, <isAnonymous>, <thread dsq:id>, <parent dsq:id>) a post. Authors become
// readers `disqus:<username>`, or `disqus:anon-<hash>` of their email (or name) when anonymous; the
// email itself is not kept.
import { child, childText, readXml, type XmlNode } from "./xml-reader.js";
import { emailOf, htmlToText, outOfRangeDate, parseSourceDate, sha256Hex, type SourceItem } from "./source.js";

export function parseDisqus(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  return readXml(
    input,
    (node, stack) => {
      if (stack.length !== 1) return undefined; // a record is a child of <disqus>
      if (node.name === "thread") return [thread(node)];
      if (node.name === "post") return [post(node)];
      return [];
    },
    // a record's fields are kept until it closes; the records themselves are dropped once read
    (_node, stack) => stack.length > 1,
  );
}

const dsqId = (n: XmlNode | undefined) => n?.attrs["dsq:id"]?.trim() || null;
const isTrue = (text: string | null) => text === "true" || text === "1";

function thread(n: XmlNode): SourceItem {
  const key = dsqId(n);
  if (!key) return { kind: "error", position: n.position, message: "<thread> without a dsq:id" };
  const createdAt = parseSourceDate(childText(n, "createdAt"));
  const late = outOfRangeDate({ "<createdAt>": createdAt });
  if (late) return { kind: "error", position: n.position, message: `<thread dsq:id="${key}">: ${late}` };
  return {
    kind: "thread",
    key,
    identifier: childText(n, "id") || null,
    url: childText(n, "link") || null,
    title: childText(n, "title") || null,
    state: isTrue(childText(n, "isClosed")) ? "locked" : "open",
    deleted: isTrue(childText(n, "isDeleted")),
    createdAt,
    position: n.position,
  };
}

function post(n: XmlNode): SourceItem {
  const key = dsqId(n);
  const bad = (message: string): SourceItem => ({
    kind: "error",
    position: n.position,
    message: `<post dsq:id="${key ?? ""}">: ${message}`,
  });
  if (!key) return bad("no dsq:id");
  const threadKey = dsqId(child(n, "thread"));
  if (!threadKey) return bad("no <thread dsq:id>");
  const createdAt = parseSourceDate(childText(n, "createdAt"));
  if (!createdAt) return bad("<createdAt> is missing or not a date");
  const late = outOfRangeDate({ "<createdAt>": createdAt });
  if (late) return bad(late);
  const deleted = isTrue(childText(n, "isDeleted"));
  const spam = isTrue(childText(n, "isSpam"));
  const body = deleted ? "" : htmlToText(child(n, "message")?.text ?? "");
  if (!deleted && !body) return bad("<message> is empty");
  const author = child(n, "author");
  const username = childText(author, "username");
  const name = childText(author, "name");
  const anonymous = isTrue(childText(author, "isAnonymous")) || !username;
  const email = childText(author, "email")?.toLowerCase() ?? "";
  const authorId = anonymous ? `disqus:anon-${sha256Hex(email || name || "anonymous").slice(0, 16)}` : `disqus:${username}`;
  return {
    kind: "post",
    key,
    threadKey,
    parentKey: dsqId(child(n, "parent")),
    author: { id: authorId.slice(0, 255), name: (name || username || "Anonymous").slice(0, 200), email: emailOf(email) },
    body,
    status: deleted ? "deleted" : spam ? "rejected" : "approved",
    pinned: false,
    createdAt,
    editedAt: null,
    deletedAt: deleted ? createdAt : null,
    position: n.position,
  };
}
