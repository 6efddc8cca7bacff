// Settings › Import and export (owners; contract sections 16, 25 and 27): upload a file of any
// import format (import-formats.ts; the site's address for a format that names its pages by path) to
// POST /api/v1/imports and follow the import live (GET /api/v1/imports/{id} once a second: bytes read,
// threads, comments, readers, skipped, the bad records with their positions) to its summary; the
// tenant's imports made by any means (console, API, CLI) from GET /api/v1/imports, each with its
// format, counts and bad records; download everything as NDJSON from GET /api/v1/export. The
// routes: src/modules/portability/http-routes.ts.
import { useEffect, useState } from "preact/hooks";
import { rest, ApiError } from "../api";
import { ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { SettingsViews } from "./settings-views";
import { IMPORT_FORMAT_CHOICES, formatLabel } from "./import-formats";

interface ImportState {
  id: string;
  format: string;
  state: "running" | "succeeded" | "failed";
  via: "api" | "console" | "cli" | null;
  site: string | null;
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
  createdAt: string;
}

const VIA = { api: "API", console: "Console", cli: "CLI" } as const;
const STATE = { running: "Running", succeeded: "Finished", failed: "Failed" } as const;

const POLL_MS = 1000;
const number = (n: number) => n.toLocaleString("en");

export function PortabilityScreen() {
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState("disqus");
  const [onError, setOnError] = useState("skip");
  const [keepEmails, setKeepEmails] = useState(false);
  const [site, setSite] = useState("");
  const [idFrom, setIdFrom] = useState("identifier");
  const imports = useLoad(() => rest<{ items: ImportState[] }>("GET", "/api/v1/imports?limit=20"));
  const chosen = IMPORT_FORMAT_CHOICES.find((f) => f.value === format) ?? IMPORT_FORMAT_CHOICES[0]!;
  const [job, setJob] = useState<ImportState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);

  // follow a running import until it ends
  useEffect(() => {
    if (!job) return;
    if (job.state !== "running") {
      imports.reload();
      return;
    }
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
      const query = new URLSearchParams({ format, idFrom, onError, keepEmails: String(keepEmails) });
      if (chosen.needsSite || site.trim()) query.set("site", site.trim());
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
        Bring comments from Disqus, WordPress, remark42, Commento, isso, GitHub (utterances, giscus), Artalk, Twikoo, Cusdis, the generic
        JSON format or this service's own export. Each thread keeps its page's address, so the page shows its comments; a page that already
        has a discussion gets the imported comments in it. Running the same file again changes nothing; a file that has grown adds only what
        is new. Imported history sends no webhooks and no stream events.
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
              {IMPORT_FORMAT_CHOICES.map((f) => (
                <option key={f.value} value={f.value}>
                  {f.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Export file
            <input type="file" accept={chosen.accept} onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          </label>
          <label>
            {chosen.needsSite ? "Site address (required)" : "Site address (optional)"}
            <input
              type="url"
              inputMode="url"
              placeholder="https://blog.example"
              required={chosen.needsSite}
              aria-describedby="site-hint"
              value={site}
              onInput={(e) => setSite(e.currentTarget.value)}
            />
          </label>
          <p class="hint" id="site-hint">
            {chosen.needsSite
              ? "This file names its pages by path only: the address of the site they are on."
              : "Where a file names a page by path only, its page is on this site."}
          </p>
          <label>
            Discussion ids from
            <select value={idFrom} onChange={(e) => setIdFrom(e.currentTarget.value)}>
              <option value="identifier">the source's own name for the page</option>
              <option value="url">the page's address</option>
              <option value="path">the page's path</option>
            </select>
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
            Keep authors' email addresses where the file has them, for reply emails (otherwise none is stored)
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

      <h2 id="imports-title">Imports</h2>
      <p class="hint">Every import of this site, from the console, the API or the command line, newest first.</p>
      <ErrorMessage error={imports.error} />
      {imports.data && imports.data.items.length === 0 && <p>No imports yet.</p>}
      {imports.data && imports.data.items.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="imports-title">
          <table class="imports">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Format</th>
                <th scope="col">By</th>
                <th scope="col">State</th>
                <th scope="col">Discussions</th>
                <th scope="col">Comments</th>
                <th scope="col">Readers</th>
                <th scope="col">Already there</th>
                <th scope="col">Skipped</th>
                <th scope="col">Bad records</th>
              </tr>
            </thead>
            <tbody>
              {imports.data.items.map((i) => (
                <tr key={i.id}>
                  <td>
                    <time dateTime={i.createdAt}>{new Date(i.createdAt).toLocaleString("en")}</time>
                  </td>
                  <td>
                    {formatLabel(i.format)}
                    {i.site && <div class="muted">{i.site}</div>}
                  </td>
                  <td>{i.via ? VIA[i.via] : "—"}</td>
                  <td>
                    {STATE[i.state]}
                    {i.failure && <div class="muted">{i.failure}</div>}
                  </td>
                  <td>{number(i.threads)}</td>
                  <td>{number(i.comments)}</td>
                  <td>{number(i.readers)}</td>
                  <td>{number(i.unchanged)}</td>
                  <td>{number(i.skipped)}</td>
                  <td>
                    {i.errors.length === 0 ? (
                      "None"
                    ) : (
                      <details>
                        <summary>{`${number(i.errors.length)} listed`}</summary>
                        <ul class="import-errors">
                          {i.errors.map((e) => (
                            <li key={`${e.position}${e.message}`}>
                              <code>{e.position}</code>: {e.message}
                            </li>
                          ))}
                        </ul>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Export everything</h2>
      <p class="hint">
        Every discussion, reader, comment (with its status and parent), reaction and vote as NDJSON, the format this service imports: a way
        to keep a copy or to leave.
      </p>
      <p>
        <a class="button" href="/api/v1/export" download>
          Download export (NDJSON)
        </a>
      </p>
    </section>
  );
}
