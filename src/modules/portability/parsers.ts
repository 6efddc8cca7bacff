// Each import format's parser (parse-*.ts, each reading its format as a stream of SourceItems) and
// what the importer (engine/importer.ts) must know of a format's ids and deleted comments.
import { parseDisqus } from "./parse-disqus.js";
import { parseWordpress } from "./parse-wordpress.js";
import { parseNdjson } from "./parse-ndjson.js";
import { parseRemark42 } from "./parse-remark42.js";
import { parseCommento } from "./parse-commento.js";
import { parseIsso } from "./parse-isso.js";
import { parseGithub } from "./parse-github.js";
import { parseJson } from "./parse-json.js";
import { parseArtalk } from "./parse-artalk.js";
import { parseTwikoo } from "./parse-twikoo.js";
import { parseCusdis } from "./parse-cusdis.js";
import type { ImportFormat, SourceItem } from "./source.js";

/** Each format's parser; a parser that can be stopped mid-step (an SQLite worker: isso, Cusdis) takes the run's signal. */
export const PARSERS: Record<
  ImportFormat,
  (input: AsyncIterable<Uint8Array | string>, signal?: AbortSignal) => AsyncGenerator<SourceItem>
> = {
  disqus: parseDisqus,
  wordpress: parseWordpress,
  ndjson: parseNdjson,
  remark42: parseRemark42,
  commento: parseCommento,
  isso: parseIsso,
  github: parseGithub,
  json: parseJson,
  artalk: parseArtalk,
  twikoo: parseTwikoo,
  cusdis: parseCusdis,
};

/**
 * the formats whose comment ids are numbered per database (isso's rows, WordPress's comment_ID,
 * Artalk's): two files of one format share them, so their comments are named by discussion and id
 * (engine/importer.ts). (Twikoo's ids are MongoDB's ObjectIds or random hex, Cusdis's UUIDs: not per database.)
 */
export const SCOPED_IDS: ReadonlySet<ImportFormat> = new Set(["isso", "wordpress", "artalk"]);
/** of them, those an earlier version imported by the source id alone: a row of that id is found again */
export const LEGACY_IDS: ReadonlySet<ImportFormat> = new Set(["isso", "wordpress"]);

/** the formats whose deleted comments are skipped and counted (contract section 25), their replies hung from their parents */
export const SKIPS_DELETED: ReadonlySet<ImportFormat> = new Set(["remark42", "commento", "isso", "github", "json", "cusdis"]);
