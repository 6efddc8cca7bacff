// How bench/import-generate.ts writes its comments in each import format (docs/import.md,
// docs/import-export.md): the same threads, posts and readers as Disqus XML, remark42 JSON lines,
// a Commento export, an isso SQLite database (sql.js), GitHub's REST pages (`[…][…]`, issues
// first) or the generic JSON array. Each writer answers text to append as the generator goes;
// isso's database is built in memory and written whole at the end (`finish`).
import initSqlJs from "sql.js";

export interface GeneratedPost {
  id: number;
  thread: number;
  parent: number | undefined;
  reader: number;
  text: string;
  createdAt: number;
  deleted: boolean;
  spam: boolean;
}

interface Options {
  prefix: string;
  offset: number;
  start: number;
  iso: (ms: number) => string;
}

export interface FormatWriter {
  begin(): string;
  thread(t: number): string;
  afterThreads(): string;
  /** a post's record, as it would stand on its own */
  post(p: GeneratedPost): string;
  /** a post's record as written where it goes (its separator: the generator may write a post after the next one) */
  emit?(record: string): string;
  end(readers: number): string;
  finish?(): Promise<Uint8Array | null>;
}

/** a JSON list written as it goes: a comma before every item but the first */
const list = () => {
  let n = 0;
  return (item: string) => (n++ ? "," : "") + item;
};

export function formatWriter(format: string, o: Options): FormatWriter {
  const url = (t: number) => `https://news.example/${o.prefix}${t}`;
  const postId = (id: number) => o.offset + id;
  switch (format) {
    case "disqus":
      return {
        begin: () =>
          '<?xml version="1.0" encoding="utf-8"?>\n<disqus xmlns="http://disqus.com" xmlns:dsq="http://disqus.com/disqus-internals" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n',
        thread: (t) =>
          `<thread dsq:id="${o.offset + 1_000_000 + t}"><id>${o.prefix}${t}</id><forum>bench</forum><category dsq:id="1"/>` +
          `<link>${url(t)}</link><title>Article ${o.prefix}${t}</title><message/>` +
          `<createdAt>${o.iso(o.start + t * 1000)}</createdAt><author><name>Editor</name><isAnonymous>false</isAnonymous><username>editor</username></author>` +
          `<isClosed>false</isClosed><isDeleted>false</isDeleted></thread>\n`,
        afterThreads: () => "",
        post: (p) =>
          `<post dsq:id="${postId(p.id)}"><id/><message><![CDATA[<p>${p.text}</p>]]></message>` +
          `<createdAt>${o.iso(p.createdAt)}</createdAt><isDeleted>${p.deleted}</isDeleted>` +
          `<isSpam>${p.spam}</isSpam>` +
          `<author><email>reader${p.reader}@example.com</email><name>Reader ${p.reader}</name><isAnonymous>false</isAnonymous><username>reader${p.reader}</username></author>` +
          `<thread dsq:id="${o.offset + 1_000_000 + p.thread}"/>${p.parent ? `<parent dsq:id="${postId(p.parent)}"/>` : ""}</post>\n`,
        end: () => "</disqus>\n",
      };
    case "remark42":
      return {
        begin: () => '{"version":1,"users":[],"posts":[]}\n',
        thread: () => "",
        afterThreads: () => "",
        post: (p) =>
          `${JSON.stringify({
            id: String(postId(p.id)),
            pid: p.parent ? String(postId(p.parent)) : "",
            text: `<p>${p.text}</p>`,
            user: { name: `Reader ${p.reader}`, id: `reader${p.reader}`, picture: "", admin: false },
            locator: { site: "bench", url: url(p.thread) },
            score: p.id % 3,
            votes: p.id % 3 ? { [`voter${p.id % 7}`]: true } : {},
            time: o.iso(p.createdAt),
            ...(p.deleted ? { delete: true } : {}),
          })}\n`,
        end: () => "",
      };
    case "commento": {
      const item = list();
      return {
        begin: () => '{"version":1,"comments":[',
        thread: () => "",
        afterThreads: () => "",
        emit: item,
        post: (p) =>
          JSON.stringify({
            commentHex: `c${postId(p.id)}`,
            domain: "news.example",
            url: `/${o.prefix}${p.thread}`,
            commenterHex: `r${p.reader}`,
            markdown: p.deleted ? "[deleted]" : p.text,
            html: "",
            parentHex: p.parent ? `c${postId(p.parent)}` : "root",
            score: p.id % 3,
            state: p.spam ? "flagged" : "approved",
            creationDate: new Date(p.createdAt).toISOString(),
            direction: 0,
            deleted: p.deleted,
          }),
        end: (readers) => {
          const commenter = list();
          let out = '],"commenters":[';
          for (let r = 0; r < readers; r++)
            out += commenter(
              JSON.stringify({
                commenterHex: `r${r}`,
                email: `reader${r}@example.com`,
                name: `Reader ${r}`,
                link: "undefined",
                photo: "undefined",
                provider: "commento",
                joinDate: new Date(o.start).toISOString(),
                isModerator: false,
              }),
            );
          return `${out}]}\n`;
        },
      };
    }
    case "github": {
      // pages of 100, as the REST API answers them
      let inPage = 0;
      const page = (item: string) => {
        const out = (inPage === 0 ? "[" : ",") + item;
        if (++inPage === 100) {
          inPage = 0;
          return `${out}]`;
        }
        return out;
      };
      const close = () => {
        const out = inPage ? "]" : "";
        inPage = 0;
        return out;
      };
      const issue = (t: number) => `https://api.github.com/repos/bench/site/issues/${t + 1}`;
      return {
        begin: () => "",
        thread: (t) =>
          page(
            JSON.stringify({
              url: issue(t),
              html_url: `https://github.com/bench/site/issues/${t + 1}`,
              number: t + 1,
              title: `${o.prefix}${t}`,
              body: `# Article ${t}\n\n[${url(t)}](${url(t)})`,
              locked: false,
              created_at: o.iso(o.start + t * 1000),
            }),
          ),
        afterThreads: () => close(),
        emit: page,
        post: (p) =>
          JSON.stringify({
            url: `https://api.github.com/repos/bench/site/issues/comments/${postId(p.id)}`,
            html_url: `https://github.com/bench/site/issues/${p.thread + 1}#issuecomment-${postId(p.id)}`,
            issue_url: issue(p.thread),
            id: postId(p.id),
            user: { login: `reader${p.reader}`, id: 10_000_000 + p.reader, avatar_url: `https://avatars.example/u/${p.reader}` },
            created_at: o.iso(p.createdAt),
            updated_at: o.iso(p.createdAt),
            author_association: "NONE",
            body: p.text,
            reactions: {
              total_count: p.id % 4,
              "+1": p.id % 3,
              "-1": 0,
              laugh: 0,
              hooray: 0,
              confused: 0,
              heart: p.id % 4 > 2 ? 1 : 0,
              rocket: 0,
              eyes: 0,
            },
          }),
        end: () => `${close()}\n`,
      };
    }
    case "json": {
      const item = list();
      return {
        begin: () => "[",
        thread: (t) =>
          item(
            JSON.stringify({
              type: "discussion",
              id: `${o.prefix}${t}`,
              title: `Article ${o.prefix}${t}`,
              url: url(t),
              createdAt: o.iso(o.start + t * 1000),
            }),
          ),
        afterThreads: () => "",
        emit: item,
        post: (p) =>
          JSON.stringify({
            type: "comment",
            id: String(postId(p.id)),
            discussionId: `${o.prefix}${p.thread}`,
            ...(p.parent ? { parentId: String(postId(p.parent)) } : {}),
            authorId: `reader${p.reader}`,
            body: p.text,
            status: p.deleted ? "deleted" : p.spam ? "rejected" : "approved",
            createdAt: o.iso(p.createdAt),
            ...(p.id % 3 ? { upvotes: p.id % 3 } : {}),
          }),
        end: (readers) => {
          let out = "";
          for (let r = 0; r < readers; r++) out += item(JSON.stringify({ type: "reader", id: `reader${r}`, name: `Reader ${r}` }));
          return `${out}]\n`;
        },
      };
    }
    case "isso":
      return issoWriter(o);
    default:
      throw new Error(`--format must be disqus, remark42, commento, isso, github or json, not ${format}`);
  }
}

/** isso's schema (isso/db/*.py), filled as isso fills it; the database written whole at the end */
function issoWriter(o: Options): FormatWriter {
  const ready = initSqlJs().then((SQL) => {
    const db = new SQL.Database();
    db.run(`CREATE TABLE preferences (key VARCHAR PRIMARY KEY, value VARCHAR);
            CREATE TABLE threads (id INTEGER PRIMARY KEY, uri VARCHAR(256) UNIQUE, title VARCHAR(256));
            CREATE TABLE comments (tid REFERENCES threads(id), id INTEGER PRIMARY KEY, parent INTEGER, created FLOAT NOT NULL,
              modified FLOAT, mode INTEGER, remote_addr VARCHAR, text VARCHAR NOT NULL, author VARCHAR, email VARCHAR,
              website VARCHAR, likes INTEGER DEFAULT 0, dislikes INTEGER DEFAULT 0, voters BLOB NOT NULL, notification INTEGER DEFAULT 0);
            PRAGMA user_version = 5; BEGIN`);
    return db;
  });
  const threads: [number, string, string][] = [];
  const posts: GeneratedPost[] = [];
  let db: Awaited<typeof ready> | undefined;
  void ready.then((d) => (db = d));
  const drain = () => {
    if (!db) return;
    const t = db.prepare("INSERT INTO threads (id, uri, title) VALUES (?, ?, ?)");
    for (const row of threads.splice(0)) t.run(row);
    t.free();
    const c = db.prepare(
      "INSERT INTO comments (tid, id, parent, created, modified, mode, remote_addr, text, author, email, likes, dislikes, voters) VALUES (?, ?, ?, ?, NULL, ?, '0.0.0.0', ?, ?, ?, ?, 0, x'00')",
    );
    for (const p of posts.splice(0))
      c.run([
        p.thread + 1,
        o.offset + p.id,
        p.parent ? o.offset + p.parent : null,
        p.createdAt / 1000,
        p.deleted ? 4 : p.spam ? 2 : 1,
        p.deleted ? "" : `<p>${p.text}</p>`,
        `Reader ${p.reader}`,
        `reader${p.reader}@example.com`,
        p.id % 3,
      ]);
    c.free();
  };
  return {
    begin: () => "",
    thread: (t) => {
      threads.push([t + 1, `/${o.prefix}${t}/`, `Article ${o.prefix}${t}`]);
      return "";
    },
    afterThreads: () => "",
    post: (p) => {
      posts.push(p);
      if (posts.length >= 10_000 && db) drain();
      return "";
    },
    end: () => "",
    async finish() {
      db = await ready;
      drain();
      db.run("COMMIT");
      const bytes = db.export();
      db.close();
      return bytes;
    },
  };
}
