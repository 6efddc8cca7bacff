// Settings › Import and export (owners; contract section 16): upload a Disqus, WordPress or NDJSON
// file to POST /api/v1/imports and follow the import live (GET /api/v1/imports/{id} once a second:
// bytes read, threads, comments, readers, skipped, the bad records with their positions) to its
// summary; download everything as NDJSON from GET /api/v1/export. The routes:
// src/modules/portability/http-routes.ts.
import { useEffect, useState } from "preact/hooks";
import { rest, ApiError } from "../api";
import { ErrorMessage, Notice, messageOf } from "../ui";
import { SettingsViews } from "./settings-views";

interface ImportState {
  id: string;
  format: string;
  state: "running" | "succeeded" | "failed";
  bytesRead: number;
  bytesTotal: number | null;
  threads: number;
  comments: number;
  readers: number;
  reactions: number;
  unchanged: number;
  skipped: number;
  errors: { position: string; message: string }[];
  failure: string | null;
}

const FORMATS = [
  { value: "disqus", label: "Disqus export (XML)" },
  { value: "wordpress", label: "WordPress export (WXR)" },
  { value: "ndjson", label: "This service's export (NDJSON)" },
];

const POLL_MS = 1000;
const number = (n: number) => n.toLocaleString("en");

export function PortabilityScreen() {
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState("disqus");
  const [onError, setOnError] = useState("skip");
  const [keepEmails, setKeepEmails] = useState(false);
  const [job, setJob] = useState<ImportState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);

  // follow a running import until it ends
  useEffect(() => {
    if (!job || job.state !== "running") return;
    const timer = setTimeout(() => {
      rest<ImportState>("GET", `/api/v1/imports/${encodeURIComponent(job.id)}`).then(setJob, (e: unknown) => setError(messageOf(e)));
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);

  const start = async () => {
    if (!file) {
      setError("Choose a file to import first.");
      return;
    }
    setError(null);
    setUploading(true);
    try {
      const query = new URLSearchParams({ format, onError, keepEmails: String(keepEmails) });
      setJob(await rest<ImportState>("POST", `/api/v1/imports?${query.toString()}`, file));
    } catch (e) {
      setError(e instanceof ApiError && e.fields.length ? e.fields.map((f) => `${f.path}: ${f.message}`).join("; ") : messageOf(e));
    } finally {
      setUploading(false);
    }
  };

  const percent = job?.bytesTotal ? Math.min(100, Math.round((job.bytesRead / job.bytesTotal) * 100)) : null;
  return (
    <section aria-labelledby="portability-title">
      <SettingsViews current="portability" />
      <h1 id="portability-title">Import and export</h1>

      <h2>Import comments</h2>
      <p class="hint">
        Bring comments from Disqus or WordPress, or from this service's own export. Running the same file again changes nothing; a file that
        has grown adds only what is new. Imported history sends no webhooks and no stream events.
      </p>
      <form
        class="settings portability"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <fieldset>
          <legend>File</legend>
          <label>
            Format
            <select value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
              {FORMATS.map((f) => (
                <option key={f.value} value={f.value}>
                  {f.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Export file
            <input type="file" accept=".xml,.wxr,.ndjson,.jsonl,.json" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          </label>
          <label>
            A bad record
            <select value={onError} onChange={(e) => setOnError(e.currentTarget.value)}>
              <option value="skip">is skipped and reported</option>
              <option value="stop">stops the import</option>
            </select>
          </label>
          <label class="check">
            <input type="checkbox" checked={keepEmails} onChange={(e) => setKeepEmails(e.currentTarget.checked)} />
            Keep authors' email addresses, for reply emails (Disqus and WordPress; otherwise none is stored)
          </label>
        </fieldset>
        <button type="submit" disabled={uploading || job?.state === "running"}>
          {uploading ? "Uploading…" : "Import"}
        </button>
      </form>
      <ErrorMessage error={error} />
      {job && (
        <div class="import-progress" role="region" aria-label="Import progress">
          {job.state === "running" ? (
            <>
              <label>
                {percent === null ? "Importing…" : `Importing: ${percent} %`}
                <progress max={100} value={percent ?? undefined} />
              </label>
            </>
          ) : job.state === "succeeded" ? (
            <Notice>Import finished.</Notice>
          ) : (
            <ErrorMessage error={`The import stopped: ${job.failure ?? "see the records below"}.`} />
          )}
          <dl class="summary" aria-live="polite">
            <dt>Discussions</dt>
            <dd>{number(job.threads)}</dd>
            <dt>Comments</dt>
            <dd>{number(job.comments)}</dd>
            <dt>Readers</dt>
            <dd>{number(job.readers)}</dd>
            <dt>Already there</dt>
            <dd>{number(job.unchanged)}</dd>
            <dt>Skipped</dt>
            <dd>{number(job.skipped)}</dd>
          </dl>
          {job.errors.length > 0 && (
            <>
              <h3>Records not imported</h3>
              <ul class="import-errors">
                {job.errors.map((e) => (
                  <li key={`${e.position}${e.message}`}>
                    <code>{e.position}</code>: {e.message}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}

      <h2>Export everything</h2>
      <p class="hint">
        Every discussion, reader, comment (with its status and parent) and reaction as NDJSON, the format this service imports: a way to
        keep a copy or to leave.
      </p>
      <p>
        <a class="button" href="/api/v1/export" download>
          Download export (NDJSON)
        </a>
      </p>
    </section>
  );
}
