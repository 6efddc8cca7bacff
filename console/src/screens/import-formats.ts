// The import formats the console offers (Settings › Import and export): every format of
// POST /api/v1/imports (src/modules/portability/source.ts IMPORT_FORMATS, held equal by
// test/unit/console-import-formats.test.ts), named as a site owner knows the file, with what the
// file picker suggests and whether the import needs the site's address (NEEDS_SITE there).

export interface ImportFormatChoice {
  value: string;
  label: string;
  /** the file picker's suggestion (any file may be chosen) */
  accept: string;
  /** the file names its pages by path only: the site's origin is asked for (`site`) */
  needsSite: boolean;
}

export const IMPORT_FORMAT_CHOICES: readonly ImportFormatChoice[] = [
  { value: "disqus", label: "Disqus export (XML)", accept: ".xml,.gz", needsSite: false },
  { value: "wordpress", label: "WordPress export (WXR)", accept: ".xml,.wxr,.gz", needsSite: false },
  { value: "remark42", label: "remark42 backup", accept: ".gz,.json,.txt,.r42", needsSite: false },
  { value: "commento", label: "Commento or Commento++ export (JSON)", accept: ".json,.gz", needsSite: false },
  { value: "isso", label: "isso database (SQLite)", accept: ".db,.sqlite,.sqlite3,.gz", needsSite: true },
  { value: "github", label: "GitHub comments: utterances, giscus (JSON)", accept: ".json,.gz", needsSite: false },
  { value: "artalk", label: "Artalk export (Artrans JSON)", accept: ".artrans,.json,.gz", needsSite: false },
  { value: "twikoo", label: "Twikoo comment export (JSON)", accept: ".json,.gz", needsSite: false },
  { value: "cusdis", label: "Cusdis database (SQLite, or a pg_dump)", accept: ".db,.sqlite,.sqlite3,.sql,.gz", needsSite: false },
  { value: "json", label: "Generic JSON (the documented import format)", accept: ".json,.gz", needsSite: false },
  { value: "ndjson", label: "This service's export (NDJSON)", accept: ".ndjson,.jsonl,.gz", needsSite: false },
];

export const formatLabel = (value: string) => IMPORT_FORMAT_CHOICES.find((f) => f.value === value)?.label ?? value;
