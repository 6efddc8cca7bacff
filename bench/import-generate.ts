// Writes an export of N comments in D threads, as Disqus writes one (threads first, then posts in
// time order; about a third are replies, a few of them listed before their parents; 1 % deleted, 1 %
// spam), for measuring imports: `tsx bench/import-generate.ts --comments 1000000 --threads 10000 --out /tmp/disqus-1m.xml`
// then `engagement import --tenant <id> --format disqus /tmp/disqus-1m.xml`. Deterministic (seeded).
// `--format remark42|commento|isso|github|json` writes the same comments in that system's format
// instead (bench-format-writers.ts; docs/import.md): the same threads, authors, replies, deleted
// and spam ones where the format has them, so the imports compare (bench/import-formats.ts).
// `--offset N` shifts every post and thread id by N and `--prefix` names the threads' identifiers
// (default "article-"), so a second file imports beside the first (bench/scale.ts: one big thread).
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { parseArgs } from "node:util";
import { formatWriter, type GeneratedPost } from "./bench-format-writers.js";

const { values } = parseArgs({
  options: {
    comments: { type: "string", default: "100000" },
    threads: { type: "string", default: "1000" },
    readers: { type: "string", default: "50000" },
    out: { type: "string" },
    seed: { type: "string", default: "1" },
    offset: { type: "string", default: "0" },
    prefix: { type: "string", default: "article-" },
    format: { type: "string", default: "disqus" },
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
async function write(text: string | Uint8Array) {
  if (!out.write(text)) await once(out, "drain");
}

const start = Date.parse("2015-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const writer = formatWriter(values.format ?? "disqus", { prefix: PREFIX, offset: OFFSET, start, iso });

await write(writer.begin());
let chunk = "";
for (let t = 0; t < THREADS; t++) {
  chunk += writer.thread(t);
  if (chunk.length > 1 << 20) {
    await write(chunk);
    chunk = "";
  }
}
chunk += writer.afterThreads();
// the last few posts of each thread, for replies
const recent: number[][] = Array.from({ length: THREADS }, () => []);
let held: string | null = null; // a reply held back to be written after its parent's child: children before parents
for (let i = 0; i < COMMENTS; i++) {
  const thread = pick(THREADS);
  const mine = recent[thread]!;
  const parent = mine.length && random() < 0.35 ? mine[pick(mine.length)] : undefined;
  const reader = pick(READERS);
  const text = sentence();
  const createdAt = start + 86_400_000 + i * 1000;
  const deleted = random() < 0.01;
  const spam = random() < 0.01;
  const p: GeneratedPost = { id: i + 1, thread, parent, reader, text, createdAt, deleted, spam };
  const post = writer.post(p);
  if (parent === undefined && held === null && random() < 0.01) {
    held = post; // a top-level post written after the next one (which may reply to it)
  } else {
    chunk += writer.emit ? writer.emit(post) : post;
    if (held) {
      chunk += writer.emit ? writer.emit(held) : held;
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
if (held) chunk += writer.emit ? writer.emit(held) : held;
await write(chunk + writer.end(READERS));
const file = await writer.finish?.();
if (file) await write(file);
if (out !== process.stdout) {
  out.end();
  await once(out, "finish");
}
