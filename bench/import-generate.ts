// Writes a Disqus XML export of N comments in D threads, as Disqus writes one (threads first, then
// posts in time order; about a third are replies, a few of them listed before their parents), for
// measuring imports: `tsx bench/import-generate.ts --comments 1000000 --threads 10000 --out /tmp/disqus-1m.xml`
// then `engagement import --tenant <id> --format disqus /tmp/disqus-1m.xml`. Deterministic (seeded).
// `--offset N` shifts every post and thread id by N and `--prefix` names the threads' identifiers
// (default "article-"), so a second file imports beside the first (bench/scale.ts: one big thread).
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    comments: { type: "string", default: "100000" },
    threads: { type: "string", default: "1000" },
    readers: { type: "string", default: "50000" },
    out: { type: "string" },
    seed: { type: "string", default: "1" },
    offset: { type: "string", default: "0" },
    prefix: { type: "string", default: "article-" },
  },
});
const COMMENTS = Number(values.comments);
const THREADS = Number(values.threads);
const READERS = Number(values.readers);
const OFFSET = Number(values.offset);
const PREFIX = values.prefix;

// mulberry32: a small seeded generator, so two runs write the same file
let state = Number(values.seed) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (n: number) => Math.floor(random() * n);

const WORDS = "the a comment reply agree think article good point really more about this that why not yes no maybe read".split(" ");
const sentence = () => Array.from({ length: 8 + pick(30) }, () => WORDS[pick(WORDS.length)]).join(" ");

const out = values.out ? createWriteStream(values.out) : process.stdout;
async function write(text: string) {
  if (!out.write(text)) await once(out, "drain");
}

const start = Date.parse("2015-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

await write(
  '<?xml version="1.0" encoding="utf-8"?>\n<disqus xmlns="http://disqus.com" xmlns:dsq="http://disqus.com/disqus-internals" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n',
);
let chunk = "";
for (let t = 0; t < THREADS; t++) {
  chunk +=
    `<thread dsq:id="${OFFSET + 1_000_000 + t}"><id>${PREFIX}${t}</id><forum>bench</forum><category dsq:id="1"/>` +
    `<link>https://news.example/${PREFIX}${t}</link><title>Article ${PREFIX}${t}</title><message/>` +
    `<createdAt>${iso(start + t * 1000)}</createdAt><author><name>Editor</name><isAnonymous>false</isAnonymous><username>editor</username></author>` +
    `<isClosed>false</isClosed><isDeleted>false</isDeleted></thread>\n`;
  if (chunk.length > 1 << 20) {
    await write(chunk);
    chunk = "";
  }
}
// the last few posts of each thread, for replies
const recent: number[][] = Array.from({ length: THREADS }, () => []);
let held: string | null = null; // a reply held back to be written after its parent's child: children before parents
for (let i = 0; i < COMMENTS; i++) {
  const thread = pick(THREADS);
  const mine = recent[thread]!;
  const parent = mine.length && random() < 0.35 ? mine[pick(mine.length)] : undefined;
  const reader = pick(READERS);
  const post =
    `<post dsq:id="${OFFSET + i + 1}"><id/><message><![CDATA[<p>${sentence()}</p>]]></message>` +
    `<createdAt>${iso(start + 86_400_000 + i * 1000)}</createdAt><isDeleted>${random() < 0.01 ? "true" : "false"}</isDeleted>` +
    `<isSpam>${random() < 0.01 ? "true" : "false"}</isSpam>` +
    `<author><email>reader${reader}@example.com</email><name>Reader ${reader}</name><isAnonymous>false</isAnonymous><username>reader${reader}</username></author>` +
    `<thread dsq:id="${OFFSET + 1_000_000 + thread}"/>${parent ? `<parent dsq:id="${OFFSET + parent}"/>` : ""}</post>\n`;
  if (parent === undefined && held === null && random() < 0.01) {
    held = post; // a top-level post written after the next one (which may reply to it)
  } else {
    chunk += post;
    if (held) {
      chunk += held;
      held = null;
    }
  }
  mine.push(i + 1);
  if (mine.length > 20) mine.shift();
  if (chunk.length > 1 << 20) {
    await write(chunk);
    chunk = "";
  }
}
if (held) chunk += held;
await write(`${chunk}</disqus>\n`);
if (out !== process.stdout) {
  out.end();
  await once(out, "finish");
}
