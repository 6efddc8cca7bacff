// GitHub's REST JSON of issue comments or discussion comments as `gh api --paginate` saves it (each
// page's array written as it came, one after the other: `[…][…]`), the way utterances (issues) and
// giscus (discussions) keep a site's comments, read as a stream (json-reader.ts). Issues or
// discussions listed before their comments (`gh api --paginate repos/O/R/issues?state=all` first)
// name their threads: the title (utterances and giscus title an issue with the page's path, URL or
// title) is the thread's identifier, the first http(s) URL of its body its page, and a locked
// one is locked. Without them a thread is named by the issue or discussion itself
// (`owner-repo-issues-61`, its github.com URL as its url).
//
// A comment: id, user {login, id, avatar_url} (the reader `github:<user id>`, as a GitHub sign-in
// names it, shown as the login), body (Markdown), created_at, updated_at (a later one is its edit),
// parent_id (a discussion comment's reply), reactions {"+1", "-1", laugh, hooray, confused, heart,
// rocket, eyes} (+1 and -1 counted as up- and downvotes, the rest as reactions of those kinds;
// who reacted is not in the JSON). GitHub keeps no deleted, pending or spam comments.
import { readJsonObjects } from "./json-reader.js";
import { asObject, countOf, idOf, textOf } from "./record-fields.js";
import { outOfRangeDate, parseSourceDate, type SourceItem, type SourceThread } from "./source.js";

const REACTIONS = ["laugh", "hooray", "confused", "heart", "rocket", "eyes"] as const;

/** The thread (issue or discussion) a github.com URL is on: `https://github.com/o/r/issues/61`. */
const threadUrlOf = (htmlUrl: string | null) => htmlUrl?.split("#")[0] ?? null;

export async function* parseGithub(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  /** threads by their API URL (an issue's `url`, a comment's `issue_url`) and by their github.com URL */
  const threads = new Map<string, string>();
  for await (const r of readJsonObjects(input, {
    paths: ["$.*"],
    recordDepth: 2,
    multiple: true,
    notAList: "not a list: GitHub's JSON is arrays of comments (gh api --paginate)",
  })) {
    if (r.kind === "error") {
      yield r; // a reading error is the file's last record
      continue;
    }
    const o = r.value;
    if (typeof o.body === "string" && (o.issue_url !== undefined || o.discussion_id !== undefined || o.parent_id !== undefined)) {
      const post = comment(o, r.position);
      if (post.kind === "post" && !threads.has(post.threadKey)) {
        const thread = threadOfComment(o, post.threadKey, post.createdAt, r.position);
        threads.set(post.threadKey, thread.key);
        yield thread;
      }
      if (post.kind === "post") post.threadKey = threads.get(post.threadKey) ?? post.threadKey;
      yield post;
    } else if (typeof o.number === "number" && typeof o.title === "string") {
      const thread = threadOfIssue(o, r.position);
      if (!thread) {
        yield { kind: "error", position: r.position, message: `issue ${o.number}: no url or html_url` };
        continue;
      }
      const late = outOfRangeDate({ created_at: thread.createdAt });
      if (late) {
        yield { kind: "error", position: r.position, message: `issue ${o.number}: ${late}` };
        continue;
      }
      for (const url of [textOf(o.url), threadUrlOf(textOf(o.html_url))]) if (url) threads.set(url, thread.key);
      yield thread;
    } else {
      yield {
        kind: "error",
        position: r.position,
        message: "neither a comment (body and issue_url or discussion_id) nor an issue or discussion (number and title)",
      };
    }
  }
}

function threadOfIssue(o: Record<string, unknown>, position: string): SourceThread | null {
  const key = textOf(o.url) ?? threadUrlOf(textOf(o.html_url));
  if (!key) return null;
  const page = /https?:\/\/[^\s)\]>"']+/.exec(textOf(o.body) ?? "")?.[0] ?? null;
  return {
    kind: "thread",
    key,
    identifier: textOf(o.title)?.trim() || null,
    url: page,
    title: textOf(o.title)?.trim() || null,
    state: o.locked === true ? "locked" : "open",
    createdAt: parseSourceDate(textOf(o.created_at)),
    position,
  };
}

function threadOfComment(o: Record<string, unknown>, key: string, createdAt: Date, position: string): SourceThread {
  const url = threadUrlOf(textOf(o.html_url));
  // github.com/<owner>/<repo>/issues/<n> → owner/repo/issues/n
  const name = url ? url.replace(/^https?:\/\/[^/]+\//, "") : key.replace(/^https?:\/\/[^/]+\/(repos\/)?/, "");
  return { kind: "thread", key, identifier: name || key, url, title: null, state: "open", createdAt, position };
}

function comment(o: Record<string, unknown>, position: string): SourceItem {
  const key = idOf(o.id);
  const bad = (message: string): SourceItem => ({ kind: "error", position, message: `comment ${key ?? ""}: ${message}` });
  if (!key) return bad("no id");
  const threadKey = textOf(o.issue_url) ?? threadUrlOf(textOf(o.html_url));
  if (!threadKey) return bad("no issue_url or html_url: its thread is unknown");
  const createdAt = parseSourceDate(textOf(o.created_at));
  if (!createdAt) return bad("created_at is missing or not a date");
  const body = (textOf(o.body) ?? "").trim();
  if (!body) return bad("its body is empty");
  const updatedAt = parseSourceDate(textOf(o.updated_at));
  const late = outOfRangeDate({ created_at: createdAt, updated_at: updatedAt });
  if (late) return bad(late);
  const user = asObject(o.user);
  const userId = idOf(user?.id);
  const login = textOf(user?.login)?.trim() || "ghost";
  const reactions = asObject(o.reactions);
  const counts: Record<string, number> = {};
  for (const kind of REACTIONS) if (countOf(reactions?.[kind]) > 0) counts[kind] = countOf(reactions?.[kind]);
  return {
    kind: "post",
    key,
    threadKey,
    parentKey: idOf(o.parent_id),
    author: { id: userId ? `github:${userId}` : `github:${login}`, name: login.slice(0, 200), avatarUrl: textOf(user?.avatar_url) },
    body,
    status: "approved",
    pinned: false,
    createdAt,
    editedAt: updatedAt && updatedAt.getTime() > createdAt.getTime() ? updatedAt : null,
    deletedAt: null,
    upvotes: countOf(reactions?.["+1"]),
    downvotes: countOf(reactions?.["-1"]),
    reactionCounts: Object.keys(counts).length ? counts : null,
    position,
  };
}
