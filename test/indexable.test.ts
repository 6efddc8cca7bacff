// Indexable threads (contract section 23): GET /embed/v1/discussions/{id}.html?key=pk_… read as HTML
// by parse5 (as a browser or a crawler parses it): one <engagement-thread> whose light DOM is the
// first page as semantic HTML with microformats2 classes, replies inside their parent's article,
// visible comments only (pending, rejected and shadow-banned ones nowhere in the bytes), hostile
// titles, names and bodies kept text, rel="next" paging that reaches every comment; its JSON-LD
// checked against schema.org's vocabulary and Google's discussion-forum properties; its island equal
// to what the thread element's own GraphQL query answers; ETag/304 and the cache header; the feeds'
// key rules; and `engagement render` printing the same bytes.
import { parseFragment, type DefaultTreeAdapterTypes as T } from "parse5";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

// ---------------------------------------------------------------- a small DOM reader over parse5

type El = T.Element;
const isEl = (n: T.ChildNode): n is El => "tagName" in n;
const attrOf = (e: El, name: string) => e.attrs.find((a) => a.name === name)?.value ?? null;
const classes = (e: El) => (attrOf(e, "class") ?? "").split(/\s+/).filter(Boolean);
function all(root: T.ParentNode, test: (e: El) => boolean): El[] {
  const out: El[] = [];
  for (const n of root.childNodes) {
    if (!isEl(n)) continue;
    if (test(n)) out.push(n);
    out.push(...all(n.tagName === "template" ? (n as T.Template).content : n, test));
  }
  return out;
}
const byClass = (root: T.ParentNode, c: string) => all(root, (e) => classes(e).includes(c));
function textOf(n: T.ParentNode | T.ChildNode): string {
  if ("value" in n && n.nodeName === "#text") return n.value;
  return "childNodes" in n ? n.childNodes.map(textOf).join("") : "";
}
/** the element's own child articles' direct replies: articles in its <ol>s, not deeper */
const childArticles = (e: El): El[] =>
  e.childNodes
    .filter(isEl)
    .flatMap((c) =>
      c.tagName === "ol"
        ? c.childNodes.filter(isEl).flatMap((li) => li.childNodes.filter(isEl).filter((a) => a.tagName === "article"))
        : [],
    );

// ---------------------------------------------------------------- helpers

async function publishableKey(t: TestTenant): Promise<string> {
  return (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
}

const fragmentPath = (id: string, query: string) => `/embed/v1/discussions/${encodeURIComponent(id)}.html?${query}`;

async function fragment(id: string, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${fragmentPath(id, query)}`, { headers });
  return { res, html: res.status === 200 ? await res.text() : "" };
}

function parse(html: string) {
  const root = parseFragment(html);
  const top = root.childNodes.filter(isEl);
  const thread = top.find((e) => e.tagName === "engagement-thread")!;
  const ld = top.find((e) => e.tagName === "script" && attrOf(e, "type") === "application/ld+json")!;
  const island = all(thread, (e) => e.tagName === "script" && attrOf(e, "type") === "application/json")[0];
  return { root, top, thread, ld: JSON.parse(textOf(ld)) as any, island: island ? (JSON.parse(textOf(island)) as any) : null };
}

// The schema.org vocabulary this fragment may use (https://schema.org/DiscussionForumPosting,
// /Comment, /Person, /InteractionCounter, /CommentAction): each type's properties, its own and
// inherited (Thing → CreativeWork → SocialMediaPosting → DiscussionForumPosting; CreativeWork → Comment).
const SCHEMA_ORG: Record<string, string[]> = {
  DiscussionForumPosting: [
    "headline",
    "url",
    "datePublished",
    "dateModified",
    "commentCount",
    "comment",
    "interactionStatistic",
    "author",
    "text",
    "sharedContent",
    "isPartOf",
    "mainEntityOfPage",
    "name",
    "creativeWorkStatus",
  ],
  Comment: [
    "url",
    "author",
    "datePublished",
    "dateModified",
    "text",
    "upvoteCount",
    "downvoteCount",
    "parentItem",
    "comment",
    "commentCount",
    "interactionStatistic",
    "sharedContent",
    "creativeWorkStatus",
    "name",
  ],
  Person: ["name", "url", "image"],
  InteractionCounter: ["interactionType", "userInteractionCount"],
};
const SCHEMA_ORG_ACTIONS = ["https://schema.org/CommentAction", "https://schema.org/LikeAction"];
// Google's discussion forum structured data (developers.google.com/search/docs/appearance/structured-data/discussion-forum):
// what a Comment must have (author with a name, datePublished, text) and should (url)
const GOOGLE_COMMENT_REQUIRED = ["author", "datePublished", "text"];
const GOOGLE_COMMENT_RECOMMENDED = ["url"];
const GOOGLE_POSTING_RECOMMENDED = ["headline", "url", "comment", "interactionStatistic"];

/** Every object of the JSON-LD: its @type is a schema.org type we list and each property is that type's. */
function checkVocabulary(node: any, path = "$"): void {
  if (Array.isArray(node)) return node.forEach((n, i) => checkVocabulary(n, `${path}[${i}]`));
  if (!node || typeof node !== "object") return;
  const type = node["@type"] as string;
  expect(SCHEMA_ORG, `${path} @type ${type}`).toHaveProperty(type);
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith("@")) continue;
    expect(SCHEMA_ORG[type], `${path}.${k} on ${type}`).toContain(k);
    if (k === "interactionType") expect(SCHEMA_ORG_ACTIONS).toContain(v);
    checkVocabulary(v, `${path}.${k}`);
  }
}

function flatComments(list: any[]): any[] {
  return list.flatMap((c) => [c, ...flatComments(c.comment ?? [])]);
}

// ---------------------------------------------------------------- tests

describe("GET /embed/v1/discussions/{id}.html", () => {
  it("is the first page as semantic HTML with microformats, visible comments only, hostile input kept text, and valid JSON-LD", async () => {
    const t = await createTestTenant(server);
    const key = await publishableKey(t);
    const title = `Rivers & "lakes" </script><script>alert(1)</script><!--`;
    expect((await t.api.put("/api/v1/discussions/ix-1", { title, url: "https://news.example/rivers?x=1&y=2" })).status).toBe(201);
    expect((await t.api.patch("/api/v1/settings", { votes: "up" })).status).toBe(200);
    const evil = await t.reader("evil", { name: `<img src=x onerror=alert(1)>"' </script><!--` });
    const ann = await t.reader("ann", { name: "Ann" });
    const bob = await t.reader("bob", { name: "Bob", badge: "Staff" });
    const post = async (who: typeof ann, body: string, parentId?: string) => {
      const r = await who.post("/api/v1/discussions/ix-1/comments", parentId ? { body, parentId } : { body });
      expect(r.status).toBe(201);
      return r.body as { id: string; bodyHtml: string; createdAt: string };
    };
    const first = await post(ann, "**Deep** water \u2028 </script><!-- <script>alert(2)</script>");
    const second = await post(evil, "second");
    const reply = await post(bob, "a reply", first.id);
    const deeper = await post(ann, "a reply to the reply", reply.id);
    expect((await bob.put(`/api/v1/comments/${first.id}/vote`, { value: 1 })).status).toBe(200);
    // what no reader sees: rejected, pending, shadow-banned
    const rejected = await post(ann, "REJECTED-TEXT");
    expect((await t.api.post(`/api/v1/comments/${rejected.id}/reject`)).status).toBe(200);
    const troll = await t.reader("troll", { name: "Troll" });
    expect((await troll.post("/api/v1/discussions/ix-elsewhere/comments", { body: "elsewhere" })).status).toBe(201);
    expect((await t.api.post("/api/v1/readers/troll/ban", { shadow: true, reason: "x" })).status).toBe(200);
    await post(troll, "SHADOW-TEXT");
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    await post(ann, "PENDING-TEXT");

    const { res, html } = await fragment("ix-1", `key=${key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=300");
    expect(res.headers.get("link")).toBe('<https://news.example/rivers?x=1&y=2>; rel="canonical"');
    for (const hidden of ["REJECTED-TEXT", "SHADOW-TEXT", "PENDING-TEXT", rejected.id, "Troll"]) expect(html).not.toContain(hidden);

    const { top, thread, ld, island } = parse(html);
    // one element, then one JSON-LD script: nothing a hostile string made
    expect(top.map((e) => e.tagName)).toEqual(["engagement-thread", "script"]);
    expect(all(thread, (e) => e.tagName === "script").map((e) => attrOf(e, "type"))).toEqual(["application/json"]);
    expect(all(thread, (e) => e.tagName === "img")).toEqual([]);
    expect(attrOf(thread, "discussion-id")).toBe("ix-1");
    expect(attrOf(thread, "publishable-key")).toBe(key);
    expect(attrOf(thread, "api-base")).toBe(server.url);
    expect(attrOf(thread, "discussion-url")).toBe("https://news.example/rivers?x=1&y=2");

    // newest first; replies inside their parent's article
    const list = all(thread, (e) => e.tagName === "ol" && classes(e).includes("comments"))[0]!;
    const topArticles = list.childNodes.filter(isEl).map((li) => li.childNodes.filter(isEl).find((a) => a.tagName === "article")!);
    expect(topArticles.map((a) => attrOf(a, "id"))).toEqual([`comment-${second.id}`, `comment-${first.id}`]);
    const firstArticle = topArticles[1]!;
    expect(childArticles(firstArticle).map((a) => attrOf(a, "id"))).toEqual([`comment-${reply.id}`]);
    expect(childArticles(childArticles(firstArticle)[0]!).map((a) => attrOf(a, "id"))).toEqual([`comment-${deeper.id}`]);

    // microformats2 on every comment
    const entries = byClass(thread, "h-entry");
    expect(entries).toHaveLength(4);
    const permalink = (id: string) => `https://news.example/rivers?x=1&y=2#comment-${id}`;
    for (const e of entries) {
      const id = attrOf(e, "id")!.slice("comment-".length);
      const author = byClass(e, "p-author")[0]!;
      expect(classes(author)).toContain("h-card");
      const time = byClass(e, "dt-published")[0]!;
      expect(time.tagName).toBe("time");
      expect(Date.parse(attrOf(time, "datetime")!)).not.toBeNaN();
      expect(textOf(time).trim()).not.toBe("");
      expect(attrOf(byClass(e, "u-url")[0]!, "href")).toBe(permalink(id));
      expect(byClass(e, "e-content")).not.toHaveLength(0);
    }
    const entry = (id: string) => entries.find((e) => attrOf(e, "id") === `comment-${id}`)!;
    expect(textOf(byClass(entry(second.id), "p-author")[0]!)).toBe(`<img src=x onerror=alert(1)>"' </script><!--`);
    expect(textOf(byClass(entry(reply.id), "p-author")[0]!)).toBe("Bob");
    expect(textOf(entry(reply.id))).toContain("Staff");
    expect(attrOf(byClass(entry(first.id), "dt-published")[0]!, "datetime")).toBe(first.createdAt);
    expect(attrOf(byClass(entry(reply.id), "u-in-reply-to")[0]!, "value")).toBe(permalink(first.id));
    expect(attrOf(byClass(entry(deeper.id), "u-in-reply-to")[0]!, "value")).toBe(permalink(reply.id));
    expect(byClass(entry(first.id), "u-in-reply-to").filter((e) => e.parentNode === entry(first.id))).toEqual([]);
    // the body is the stored bodyHtml exactly as REST answers it (the one sanitizer's output)
    expect(html).toContain(`<div class="e-content">${first.bodyHtml}</div>`);
    expect(textOf(byClass(entry(first.id), "e-content")[0]!)).toContain("Deep water \u2028 </script><!-- <script>alert(2)</script>");
    expect(textOf(all(thread, (e) => e.tagName === "h2")[0]!)).toBe("Comments (4 comments)");
    expect(all(thread, (e) => attrOf(e, "rel") === "next")).toEqual([]);
    // the parts the live thread has in their places (docs/seo.md, "Upgrade in place"): under the heading
    // a line where its composer goes, and on every comment a footer linking it where its actions go
    const parts = thread.childNodes.filter(isEl).map((e) => e.tagName);
    expect(parts.slice(parts.indexOf("h2"), parts.indexOf("h2") + 3)).toEqual(["h2", "p", "ol"]);
    expect(textOf(thread.childNodes.filter(isEl)[parts.indexOf("h2") + 1]!)).toBe("Join the discussion…");
    for (const e of entries) {
      const footer = e.childNodes.filter(isEl).find((c) => c.tagName === "footer");
      expect(footer && attrOf(all(footer, (a) => a.tagName === "a")[0]!, "href"), attrOf(e, "id")!).toBe(
        permalink(attrOf(e, "id")!.slice("comment-".length)),
      );
    }

    // JSON-LD: schema.org's vocabulary, Google's properties, the same comments nested the same way
    checkVocabulary(ld);
    expect(ld["@context"]).toBe("https://schema.org");
    expect(ld["@type"]).toBe("DiscussionForumPosting");
    expect(ld.headline).toBe(title);
    expect(ld.url).toBe("https://news.example/rivers?x=1&y=2");
    expect(ld.commentCount).toBe(4);
    for (const p of GOOGLE_POSTING_RECOMMENDED) expect(ld).toHaveProperty(p);
    // Google requires the posting's own author and text: the host page's article's, which the service does not know (docs/seo.md)
    expect(ld.datePublished).toEqual(expect.any(String));
    expect(ld).not.toHaveProperty("author");
    expect(ld).not.toHaveProperty("text");
    const comments = flatComments(ld.comment);
    expect(comments.map((c) => c.url)).toEqual([second.id, first.id, reply.id, deeper.id].map(permalink));
    for (const c of comments) {
      for (const p of [...GOOGLE_COMMENT_REQUIRED, ...GOOGLE_COMMENT_RECOMMENDED]) expect(c).toHaveProperty(p);
      expect(c.author).toEqual({ "@type": "Person", name: expect.any(String) });
      expect(c.upvoteCount).toEqual(expect.any(Number));
    }
    expect(ld.comment[1].comment[0].comment[0].text).toBe("a reply to the reply");
    expect(ld.comment[1].text).toBe("Deep water \u2028 </script><!-- <script>alert(2)</script>");
    expect(ld.comment[1].upvoteCount).toBe(1);
    expect(ld.comment[0].author.name).toBe(`<img src=x onerror=alert(1)>"' </script><!--`);
    // inside the script elements nothing reads as markup
    const scripts = html.match(/<script[^>]*>([\s\S]*?)<\/script>/g)!;
    expect(scripts).toHaveLength(2);
    for (const s of scripts) expect(s.slice(s.indexOf(">") + 1, -"</script>".length)).not.toMatch(/[<>]|\u2028/);

    // the island: what the element's own GraphQL query (embed/src/thread/api.ts, EmbedThread and EmbedBasics) answers
    const COMMENT = `id parentId author { id name avatarUrl badge } body bodyHtml status kind pinned editedAt createdAt reactions: reactionMap viewerReactions replyCount score upvotes downvotes myVote`;
    const PAGE_INFO = `pageInfo { hasNextPage endCursor }`;
    const run = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await t.as({ key }).raw("POST", "/graphql", { query, variables });
      expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
      return r.body.data;
    };
    const { readerSettings, ...thread1 } = await run(`query { comments(discussionId: "ix-1", topLevel: true, first: 20) {
        discussion { state commentCount seq reactions: reactionMap myReactions bluesky { url } }
        edges { node { ${COMMENT} replies(first: 5) { edges { node { ${COMMENT} } } ${PAGE_INFO} } } } ${PAGE_INFO} }
      readerSettings { reactionKinds pageReactionKinds editWindowSeconds maxBodyLength votes signInUrl } }`);
    // EmbedReplies: a reply's own replies, as "Show replies" reads them
    const deeperPage = (
      await run(
        `query($p: String!) { comments(discussionId: "ix-1", parentId: $p, sort: oldest, first: 20) { edges { node { ${COMMENT} } } ${PAGE_INFO} } }`,
        {
          p: reply.id,
        },
      )
    ).comments;
    // the island's comments carry the events' JSON (with discussionId, without the source, and without
    // bodyHtml: each body is once in the page, its article's e-content); the element's query selects the rest
    const strip = (page: any, depth: number): any => ({
      ...page,
      edges: page.edges.map(({ node }: any) => {
        const { discussionId: _, replies, body, ...rest } = node;
        expect(body).toBe("");
        expect(node).not.toHaveProperty("bodyHtml");
        return { node: { ...rest, ...(replies && depth > 0 ? { replies: strip(replies, depth - 1) } : {}) } };
      }),
    });
    const bodies = new Map<string, string>();
    const dropEmpty = (page: any): any => ({
      ...page,
      edges: page.edges.map(({ node }: any) => {
        const { replies, body: _, bodyHtml, ...rest } = node;
        bodies.set(node.id, bodyHtml);
        return { node: { ...rest, ...(replies && replies.edges.length ? { replies: dropEmpty(replies) } : {}) } };
      }),
    });
    expect(island.discussionId).toBe("ix-1");
    expect(island.sort).toBe("newest");
    expect(island.seq).toEqual(expect.any(Number));
    expect(island.readerSettings).toEqual(readerSettings);
    const { discussion: pageDiscussion, ...thread1Page } = thread1.comments;
    expect(island.thread.discussion).toEqual(pageDiscussion);
    expect(island.thread.discussion.seq).toBe(island.seq);
    expect(strip(island.thread.comments, 1)).toEqual(dropEmpty(thread1Page));
    expect(strip(island.thread.comments.edges[1].node.replies.edges[0].node.replies, 0)).toEqual(dropEmpty(deeperPage));
    // each body GraphQL answers is the e-content of its comment's article, once in the bytes
    expect([...bodies.keys()].sort()).toEqual([first.id, second.id, reply.id, deeper.id].sort());
    for (const [id, bodyHtml] of bodies) {
      const content = `<div class="e-content">${bodyHtml}</div>`;
      expect(html.indexOf(content, html.indexOf(`<article id="comment-${id}"`))).toBe(
        html.indexOf('<div class="e-content">', html.indexOf(`<article id="comment-${id}"`)),
      );
      expect(html.split(content)).toHaveLength(2);
    }
    expect(JSON.stringify(island)).not.toContain("bodyHtml");

    // on a discussion closed to comments, the line under the heading says so, as the live thread's notice does
    expect((await t.api.post("/api/v1/discussions/ix-1/lock")).status).toBe(200);
    const closed = parse((await fragment("ix-1", `key=${key}`)).html).thread.childNodes.filter(isEl);
    expect(textOf(closed[closed.findIndex((e) => e.tagName === "h2") + 1]!)).toBe("Comments are closed on this discussion.");
  });

  it("pages by rel=next: 20 top-level comments each, in the sort asked for, every comment reachable; words and dates in the language asked for", async () => {
    const t = await createTestTenant(server);
    const key = await publishableKey(t);
    expect((await t.api.put("/api/v1/discussions/ix-pages", { title: "Pages" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await ann.post("/api/v1/discussions/ix-pages/comments", { body: `c${i}` })).body.id as string);

    const seen: string[] = [];
    let path: string | null = fragmentPath("ix-pages", `key=${key}&sort=oldest&lang=de`);
    let pages = 0;
    while (path) {
      const res = await fetch(path.startsWith("http") ? path : `${server.url}${path}`);
      expect(res.status).toBe(200);
      const { thread } = parse(await res.text());
      pages++;
      const articles = byClass(thread, "h-entry");
      expect(articles.length).toBe(pages === 1 ? 20 : 3);
      seen.push(...articles.map((a) => attrOf(a, "id")!.slice("comment-".length)));
      expect(attrOf(thread, "sort")).toBe("oldest");
      expect(attrOf(thread, "lang")).toBe("de");
      expect(textOf(all(thread, (e) => e.tagName === "h2")[0]!)).toBe("Kommentare (23 Kommentare)");
      const next = all(thread, (e) => e.tagName === "a" && attrOf(e, "rel") === "next")[0];
      if (next) expect(textOf(next)).toBe("Weitere Kommentare laden");
      path = next ? attrOf(next, "href") : null;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(ids);
    // sorted newest first by default, and an unknown discussion's page of another list's cursor is refused
    const { html } = await fragment("ix-pages", `key=${key}`);
    expect(byClass(parse(html).thread, "h-entry").map((a) => attrOf(a, "id"))[0]).toBe(`comment-${ids[22]}`);
    const nextOldest = attrOf(
      all(parse((await fragment("ix-pages", `key=${key}&sort=oldest`)).html).thread, (e) => attrOf(e, "rel") === "next")[0]!,
      "href",
    )!;
    const cursor = new URL(nextOldest).searchParams.get("cursor")!;
    const mixed = await fragment("ix-pages", `key=${key}&sort=newest&cursor=${encodeURIComponent(cursor)}`);
    expect(mixed.res.status).toBe(400);
    expect(await mixed.res.json()).toMatchObject({ code: "invalid_parameter", errors: [{ path: "cursor" }] });
  });

  it(
    "reaches every visible comment through plain links: a comment whose replies were cut off links its replies page",
    { timeout: 60_000 },
    async () => {
      const t = await createTestTenant(server);
      const key = await publishableKey(t);
      expect((await t.api.put("/api/v1/discussions/ix-deep", { title: "Deep", url: "https://blog.example/deep" })).status).toBe(201);
      const readers = await Promise.all(["a", "b", "c", "d"].map((sub) => t.reader(sub, { name: `Reader ${sub}` })));
      let n = 0;
      const post = async (body: string, parentId?: string) => {
        const r = await readers[n++ % 4]!.post("/api/v1/discussions/ix-deep/comments", parentId ? { body, parentId } : { body });
        expect(r.status).toBe(201);
        return r.body.id as string;
      };
      const inBatches = async (count: number, make: (i: number) => Promise<string>) => {
        const out: string[] = [];
        for (let i = 0; i < count; i += 10)
          out.push(...(await Promise.all(Array.from({ length: Math.min(10, count - i) }, (_, j) => make(i + j)))));
        return out;
      };
      // the oldest top-level comment has 23 replies (past 20 per comment), its first reply one of its own;
      // 19 newer ones have 10 each (with the wide one's, past the page's 200)
      const wide = await post("wide");
      const wideReplies: string[] = [];
      for (let i = 0; i < 23; i++) wideReplies.push(await post(`wide reply ${i}`, wide));
      const deepest = await post("a reply to the first wide reply", wideReplies[0]);
      // one at a time: the tests below name the newest and the oldest of them by position
      const others: string[] = [];
      for (let i = 0; i < 19; i++) others.push(await post(`top ${i}`));
      const otherReplies = (await Promise.all(others.map((id) => inBatches(10, (i) => post(`reply ${i}`, id))))).flat();
      const everyone = new Set([wide, ...wideReplies, deepest, ...others, ...otherReplies]);
      expect(everyone.size).toBe(1 + 23 + 1 + 19 + 190);

      // a crawler: follow every link of the service's fragments from the first page
      const seen = new Set<string>();
      const queue = [`${server.url}${fragmentPath("ix-deep", `key=${key}`)}`];
      const visited = new Set<string>();
      const replyPages: { url: URL; html: string }[] = [];
      while (queue.length) {
        const url = queue.shift()!;
        if (visited.has(url)) continue;
        visited.add(url);
        const res = await fetch(url);
        expect([url, res.status]).toEqual([url, 200]);
        const html = await res.text();
        const { thread, ld } = parse(html);
        for (const a of all(thread, (e) => e.tagName === "article")) seen.add(attrOf(a, "id")!.slice("comment-".length));
        checkVocabulary(ld);
        if (new URL(url).searchParams.has("parentId")) replyPages.push({ url: new URL(url), html });
        for (const a of all(thread, (e) => e.tagName === "a")) {
          const href = attrOf(a, "href")!;
          if (href.startsWith(server.url)) queue.push(href);
          else expect(href).toMatch(/^https:\/\/blog\.example\/deep#comment-/);
        }
      }
      expect([...everyone].filter((id) => !seen.has(id))).toEqual([]);

      // newest first, the 19 newer comments' 190 replies come first: the wide one gets the page's last
      // 10, and a link to the rest after them; its first reply's own reply is past the page's 200
      const { html: firstPage } = await fragment("ix-deep", `key=${key}`);
      const { thread } = parse(firstPage);
      const articleIn = (root: El, id: string) => all(root, (e) => e.tagName === "article" && attrOf(e, "id") === `comment-${id}`)[0]!;
      const moreLink = (article: El) =>
        article.childNodes
          .filter(isEl)
          .flatMap((p) => (p.tagName === "p" ? p.childNodes.filter(isEl).filter((x) => x.tagName === "a") : []))[0];
      expect(childArticles(articleIn(thread, others[0]!))).toHaveLength(10);
      expect(moreLink(articleIn(thread, others[0]!))).toBeUndefined();
      expect(childArticles(articleIn(thread, wide))).toHaveLength(10);
      const wideMore = moreLink(articleIn(thread, wide))!;
      expect(textOf(wideMore)).toBe("Show 13 more replies");
      const wideUrl = new URL(attrOf(wideMore, "href")!);
      expect(wideUrl.searchParams.get("parentId")).toBe(wide);
      expect(wideUrl.searchParams.get("cursor")).toEqual(expect.any(String));
      expect(childArticles(articleIn(thread, wideReplies[0]!))).toEqual([]);
      expect(textOf(moreLink(articleIn(thread, wideReplies[0]!))!)).toBe("Show 1 more reply");
      // oldest first, the wide comment's 20 come first (20 per comment), and the page's 200 end before the last comment's replies
      const oldest = parse((await fragment("ix-deep", `key=${key}&sort=oldest`)).html).thread;
      expect(childArticles(articleIn(oldest, wide))).toHaveLength(20);
      expect(textOf(moreLink(articleIn(oldest, wide))!)).toBe("Show 3 more replies");
      expect(childArticles(articleIn(oldest, others[18]!))).toEqual([]);
      const lastMore = moreLink(articleIn(oldest, others[18]!))!;
      expect(textOf(lastMore)).toBe("Show 10 more replies");
      expect(new URL(attrOf(lastMore, "href")!).searchParams.get("sort")).toBe("oldest");
      expect(new URL(attrOf(lastMore, "href")!).searchParams.has("cursor")).toBe(false);

      // the wide comment's replies page after the 10 shown: the comment, its other 13 replies, no island, its JSON-LD nested the same way
      const rest = await fetch(wideUrl);
      const restHtml = await rest.text();
      const restPage = parse(restHtml);
      const list = all(restPage.thread, (e) => e.tagName === "ol" && classes(e).includes("comments"))[0]!;
      const tops = list.childNodes.filter(isEl).map((li) => li.childNodes.filter(isEl).find((a) => a.tagName === "article")!);
      expect(tops.map((a) => attrOf(a, "id"))).toEqual([`comment-${wide}`]);
      expect(childArticles(tops[0]!).map((a) => attrOf(a, "id"))).toEqual(wideReplies.slice(10).map((id) => `comment-${id}`));
      expect(restPage.island).toBeNull();
      expect(all(restPage.thread, (e) => attrOf(e, "rel") === "next")).toEqual([]);
      expect(restPage.ld.comment.map((c: any) => c.url)).toEqual([`https://blog.example/deep#comment-${wide}`]);
      expect(restPage.ld.comment[0].comment.map((c: any) => c.url)).toEqual(
        wideReplies.slice(10).map((id) => `https://blog.example/deep#comment-${id}`),
      );
      expect(rest.headers.get("link")).toBe('<https://blog.example/deep>; rel="canonical"');
      // a reply's replies page: the reply (in reply to its parent), then its own reply
      const deepPage = replyPages.find((p) => p.url.searchParams.get("parentId") === wideReplies[0])!;
      expect(deepPage.url.searchParams.has("cursor")).toBe(false);
      const deep = parse(deepPage.html).thread;
      expect(attrOf(byClass(deep, "u-in-reply-to")[0]!, "value")).toBe(`https://blog.example/deep#comment-${wide}`);
      expect(byClass(deep, "h-entry").map((a) => attrOf(a, "id"))).toEqual([`comment-${wideReplies[0]}`, `comment-${deepest}`]);

      // a replies page without a cursor pages by rel=next past 20 replies
      const { html: widePage } = await fragment("ix-deep", `key=${key}&parentId=${wide}`);
      const next = all(parse(widePage).thread, (e) => attrOf(e, "rel") === "next")[0]!;
      expect(new URL(attrOf(next, "href")!).searchParams.get("parentId")).toBe(wide);

      // the OpenAPI document names the parameter
      const openapi = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as any;
      expect(openapi.paths["/embed/v1/discussions/{id}.html"].get.parameters.map((p: any) => p.name)).toContain("parentId");

      // what is not a comment of this discussion's, or not a cursor of the list asked for, is refused
      expect((await t.api.put("/api/v1/discussions/ix-other", {})).status).toBe(201);
      const elsewhere = (await readers[0]!.post("/api/v1/discussions/ix-other/comments", { body: "elsewhere" })).body.id as string;
      const cases: [string, number, string | null][] = [
        [`key=${key}&parentId=${elsewhere}`, 404, null],
        [`key=${key}&parentId=cmt_nope`, 404, null],
        [`key=${key}&parentId=${encodeURIComponent("<b>")}`, 400, "parentId"],
        [`key=${key}&parentId=${others[0]}&cursor=${encodeURIComponent(wideUrl.searchParams.get("cursor")!)}`, 400, "cursor"],
        [`key=${key}&cursor=${encodeURIComponent(wideUrl.searchParams.get("cursor")!)}`, 400, "cursor"],
        [`key=${key}&parentId=${wide}&parentId=${wide}`, 400, "parentId"],
      ];
      for (const [query, status, path] of cases) {
        const r = await fragment("ix-deep", query);
        expect([query, r.res.status]).toEqual([query, status]);
        const problem = (await r.res.json()) as { code: string; errors?: { path: string }[] };
        if (path) expect(problem).toMatchObject({ code: "invalid_parameter", errors: [{ path }] });
        else expect(problem.code).toBe("not_found");
      }
    },
  );

  it("answers 304 to its ETag until a visible comment appears or changes", async () => {
    const t = await createTestTenant(server);
    const key = await publishableKey(t);
    expect((await t.api.put("/api/v1/discussions/ix-etag", { title: "ETag" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    const c = (await ann.post("/api/v1/discussions/ix-etag/comments", { body: "one" })).body.id as string;
    const first = await fragment("ix-etag", `key=${key}`);
    const etag = first.res.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${server.url}${fragmentPath("ix-etag", `key=${key}`)}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=300");

    await ann.post("/api/v1/discussions/ix-etag/comments", { body: "two" });
    const afterNew = await fetch(`${server.url}${fragmentPath("ix-etag", `key=${key}`)}`, { headers: { "if-none-match": etag } });
    expect(afterNew.status).toBe(200);
    const etag2 = afterNew.headers.get("etag")!;
    expect(etag2).not.toBe(etag);
    expect(await afterNew.text()).toContain("two");

    expect((await ann.patch(`/api/v1/comments/${c}`, { body: "one, edited" })).status).toBe(200);
    const afterEdit = await fetch(`${server.url}${fragmentPath("ix-etag", `key=${key}`)}`, { headers: { "if-none-match": etag2 } });
    expect(afterEdit.status).toBe(200);
    expect(afterEdit.headers.get("etag")).not.toBe(etag2);
    expect(await afterEdit.text()).toContain("one, edited");
  });

  it("takes the feeds' key rules; every bad request is a problem document", async () => {
    const t = await createTestTenant(server);
    const key = await publishableKey(t);
    expect((await t.api.put("/api/v1/discussions/ix-keys", {})).status).toBe(201);
    const cases: [string, number, string][] = [
      [fragmentPath("ix-keys", `key=${t.apiKey}`), 400, "invalid_parameter"],
      [fragmentPath("ix-keys", ""), 401, "unauthenticated"],
      ["/embed/v1/discussions/ix-keys.html", 401, "unauthenticated"],
      [fragmentPath("ix-keys", "key=pk_unknown"), 401, "unauthenticated"],
      [fragmentPath("nope", `key=${key}`), 404, "not_found"],
      [`/embed/v1/discussions/ix-keys.json?key=${key}`, 404, "not_found"],
      [`/embed/v1/discussions/bad%20id.html?key=${key}`, 400, "invalid_parameter"],
      [fragmentPath("ix-keys", `key=${key}&sort=random`), 400, "invalid_parameter"],
      [fragmentPath("ix-keys", `key=${key}&lang=${encodeURIComponent("<x>")}`), 400, "invalid_parameter"],
      [fragmentPath("ix-keys", `key=${key}&cursor=garbage`), 400, "invalid_parameter"],
      [fragmentPath("ix-keys", `key=${key}&colour=red`), 400, "invalid_parameter"],
      [fragmentPath("ix-keys", `key=${key}&sort=oldest&sort=newest`), 400, "invalid_parameter"],
    ];
    for (const [path, status, code] of cases) {
      const r = await fetch(`${server.url}${path}`, { headers: { "x-api-key": t.apiKey } });
      expect([path, r.status]).toEqual([path, status]);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(((await r.json()) as { code: string }).code).toBe(code);
    }
    // a discussion with no comment yet: the element, its heading and the empty message
    const empty = await fragment("ix-keys", `key=${key}`);
    expect(empty.res.status).toBe(200);
    expect(textOf(parse(empty.html).thread)).toContain("No comments yet.");
    expect(parse(empty.html).ld).toMatchObject({ "@type": "DiscussionForumPosting", commentCount: 0, comment: [] });
  });

  it("engagement render prints the same fragment", { timeout: 60_000 }, async () => {
    const t = await createTestTenant(server);
    const key = await publishableKey(t);
    expect((await t.api.put("/api/v1/discussions/ix-cli", { title: "CLI", url: "https://blog.example/cli" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    const top = (await ann.post("/api/v1/discussions/ix-cli/comments", { body: "from the CLI" })).body.id as string;
    await ann.post("/api/v1/discussions/ix-cli/comments", { body: "a reply from the CLI", parentId: top });
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const args = [
      "render",
      "--tenant",
      t.tenantId,
      "--discussion",
      "ix-cli",
      "--sort",
      "oldest",
      "--lang",
      "fr",
      "--key",
      key,
      "--api-base",
      server.url,
    ];
    const r = await runCliInProcess(args, env);
    expect(r.code, r.stderr).toBe(0);
    const { html } = await fragment("ix-cli", `key=${key}&sort=oldest&lang=fr`);
    expect(r.stdout).toBe(html);
    expect(r.stdout).toContain("from the CLI");
    // a comment's replies page, as the route answers it with parentId
    const replies = await runCliInProcess([...args, "--parent", top], env);
    expect(replies.code, replies.stderr).toBe(0);
    expect(replies.stdout).toBe((await fragment("ix-cli", `key=${key}&sort=oldest&lang=fr&parentId=${top}`)).html);
    expect(replies.stdout).toContain("a reply from the CLI");

    const refused = await runCliInProcess(["render", "--tenant", t.tenantId, "--discussion", "ix-cli", "--sort", "random"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("sort: must be one of");
    const secret = await runCliInProcess(["render", "--tenant", t.tenantId, "--discussion", "ix-cli", "--key", t.apiKey], env);
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain("publishable key");
    // a pk_… that is no key of the tenant's: made up, another tenant's, revoked
    const render = (k: string) => runCliInProcess(["render", "--tenant", t.tenantId, "--discussion", "ix-cli", "--key", k], env);
    const madeUp = await render(`pk_${"x".repeat(40)}`);
    expect([madeUp.code, madeUp.stdout]).toEqual([1, ""]);
    expect(madeUp.stderr).toContain(`not a publishable key of tenant ${t.tenantId}`);
    const others = await render(await publishableKey(await createTestTenant(server)));
    expect(others.code).toBe(1);
    expect(others.stderr).toContain(`not a publishable key of tenant ${t.tenantId}`);
    const made = (await t.admin.post("/api/v1/publishable-keys", { label: "old" })).body as { id: string; key: string };
    expect((await t.admin.del(`/api/v1/publishable-keys/${made.id}`)).status).toBe(204);
    const revoked = await render(made.key);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain("--key is revoked");
  });
});
