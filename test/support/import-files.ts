// Small import files for the tests (test/portability.test.ts, test/portability-cli.test.ts): a Disqus
// XML export and a WordPress WXR export written as those systems write them, one element per line
// so that positions can be checked against the text.
import { createHash } from "node:crypto";

export interface DisqusThread {
  id: string;
  identifier: string;
  link: string;
  title: string;
  closed?: boolean;
  deleted?: boolean;
}

export interface DisqusPost {
  id: string;
  thread: string;
  parent?: string;
  message: string;
  createdAt?: string;
  deleted?: boolean;
  spam?: boolean;
  author: { name: string; username?: string; email?: string; anonymous?: boolean };
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * A post's date, when the test gives none, is derived from its id alone (a re-run writes the same
 * file, whichever test file of the worker wrote an id first): a minute in 2024 chosen by the id's
 * SHA-256. A test that depends on the order of its posts gives their `createdAt`.
 */
const dateOf = (id: string) => {
  const minute = createHash("sha256").update(id).digest().readUInt32BE(0) % (366 * 24 * 60);
  return new Date(Date.parse("2024-01-01T00:00:00Z") + minute * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
};

export function disqusXml(threads: DisqusThread[], posts: DisqusPost[]): string {
  const out = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<disqus xmlns="http://disqus.com" xmlns:dsq="http://disqus.com/disqus-internals" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    '  <category dsq:id="1">',
    "    <forum>news</forum>",
    "    <title>General</title>",
    "  </category>",
  ];
  for (const t of threads) {
    out.push(
      `  <thread dsq:id="${t.id}">`,
      `    <id>${esc(t.identifier)}</id>`,
      "    <forum>news</forum>",
      '    <category dsq:id="1"/>',
      `    <link>${esc(t.link)}</link>`,
      `    <title>${esc(t.title)}</title>`,
      "    <message/>",
      "    <createdAt>2023-12-31T00:00:00Z</createdAt>",
      "    <author><name>Editor</name><isAnonymous>false</isAnonymous><username>editor</username></author>",
      `    <isClosed>${t.closed ? "true" : "false"}</isClosed>`,
      `    <isDeleted>${t.deleted ? "true" : "false"}</isDeleted>`,
      "  </thread>",
    );
  }
  for (const p of posts) {
    out.push(
      `  <post dsq:id="${p.id}">`,
      "    <id/>",
      `    <message><![CDATA[${p.message}]]></message>`,
      `    <createdAt>${p.createdAt ?? dateOf(p.id)}</createdAt>`,
      `    <isDeleted>${p.deleted ? "true" : "false"}</isDeleted>`,
      `    <isSpam>${p.spam ? "true" : "false"}</isSpam>`,
      "    <author>",
      ...(p.author.email ? [`      <email>${esc(p.author.email)}</email>`] : []),
      `      <name>${esc(p.author.name)}</name>`,
      `      <isAnonymous>${p.author.anonymous ? "true" : "false"}</isAnonymous>`,
      ...(p.author.username ? [`      <username>${esc(p.author.username)}</username>`] : []),
      "    </author>",
      "    <ipAddress>127.0.0.1</ipAddress>",
      `    <thread dsq:id="${p.thread}"/>`,
      ...(p.parent ? [`    <parent dsq:id="${p.parent}"/>`] : []),
      "  </post>",
    );
  }
  out.push("</disqus>", "");
  return out.join("\n");
}

export interface WxrItem {
  postId: string;
  name: string;
  link: string;
  title: string;
  /** `<wp:post_date_gmt>` (default 2023-12-31 10:00:00) and `<wp:post_date>` (default the same) */
  postDateGmt?: string;
  postDate?: string;
  comments: { id: string; parent?: string; author: string; email?: string; content: string; approved: string; type?: string }[];
}

/** A WordPress export of WXR `version` (1.0, 1.1 or 1.2: the namespaces of that version). */
export function wxr(items: WxrItem[], version = "1.2"): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8" ?>',
    `<rss version="2.0" xmlns:excerpt="http://wordpress.org/export/${version}/excerpt/" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:wp="http://wordpress.org/export/${version}/">`,
    "<channel>",
    "  <title>A blog</title>",
    `  <wp:wxr_version>${version}</wp:wxr_version>`,
  ];
  for (const it of items) {
    out.push(
      "  <item>",
      `    <title><![CDATA[${it.title}]]></title>`,
      `    <link>${esc(it.link)}</link>`,
      "    <dc:creator><![CDATA[admin]]></dc:creator>",
      "    <content:encoded><![CDATA[<p>The post's text.</p>]]></content:encoded>",
      `    <wp:post_id>${it.postId}</wp:post_id>`,
      `    <wp:post_date><![CDATA[${it.postDate ?? it.postDateGmt ?? "2023-12-31 10:00:00"}]]></wp:post_date>`,
      `    <wp:post_date_gmt><![CDATA[${it.postDateGmt ?? "2023-12-31 10:00:00"}]]></wp:post_date_gmt>`,
      `    <wp:post_name><![CDATA[${it.name}]]></wp:post_name>`,
      "    <wp:status><![CDATA[publish]]></wp:status>",
      "    <wp:post_type><![CDATA[post]]></wp:post_type>",
    );
    for (const c of it.comments) {
      const date = dateOf(`wp-${it.postId}-${c.id}`).replace("T", " ").replace("Z", "");
      out.push(
        "    <wp:comment>",
        `      <wp:comment_id>${c.id}</wp:comment_id>`,
        `      <wp:comment_author><![CDATA[${c.author}]]></wp:comment_author>`,
        `      <wp:comment_author_email><![CDATA[${c.email ?? ""}]]></wp:comment_author_email>`,
        "      <wp:comment_author_url>https://example.org/</wp:comment_author_url>",
        "      <wp:comment_author_IP><![CDATA[127.0.0.1]]></wp:comment_author_IP>",
        `      <wp:comment_date><![CDATA[${date}]]></wp:comment_date>`,
        `      <wp:comment_date_gmt><![CDATA[${date}]]></wp:comment_date_gmt>`,
        `      <wp:comment_content><![CDATA[${c.content}]]></wp:comment_content>`,
        `      <wp:comment_approved><![CDATA[${c.approved}]]></wp:comment_approved>`,
        `      <wp:comment_type><![CDATA[${c.type ?? "comment"}]]></wp:comment_type>`,
        `      <wp:comment_parent>${c.parent ?? "0"}</wp:comment_parent>`,
        "      <wp:comment_user_id>0</wp:comment_user_id>",
        "      <wp:commentmeta><wp:meta_key><![CDATA[akismet_result]]></wp:meta_key><wp:meta_value><![CDATA[false]]></wp:meta_value></wp:commentmeta>",
        "    </wp:comment>",
      );
    }
    out.push("  </item>");
  }
  out.push("</channel>", "</rss>", "");
  return out.join("\n");
}
