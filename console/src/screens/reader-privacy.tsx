// A reader's privacy on their page (owners: capability manage_readers; docs/privacy.md): "Export"
// downloads every datum held about them as one JSON file (readerExport), "Erase" asks first in a
// dialog that names the reader and says what the tenant's privacy.erasure setting does to their
// comments, then erases them (eraseReader) and says what was done.
import { useEffect, useRef, useState } from "preact/hooks";
import { gql } from "../api";
import { EraseReaderDocument, ReaderErasureModeDocument, ReaderExportDocument, type EraseReaderMutation } from "../gql/graphql";
import { ErrorMessage, useAction, useLoad } from "../ui";
import { plural } from "../comments";

export type Erasure = EraseReaderMutation["eraseReader"];

/** A file name from a reader id (`https://login.example#42` → `reader-https___login.example_42.json`). */
const fileName = (id: string) => `reader-${id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 120)}.json`;

/** What an erasure did, in words. */
export function erasureText(name: string, e: Erasure): string {
  const done = [
    e.commentsAnonymized && plural(e.commentsAnonymized, "comment") + " anonymized",
    e.commentsDeleted && plural(e.commentsDeleted, "comment") + " deleted",
    e.commentsTombstoned && plural(e.commentsTombstoned, "tombstone") + " kept for the replies under them",
    e.reactionsRemoved && plural(e.reactionsRemoved, "reaction") + " removed",
    e.reportsRemoved && plural(e.reportsRemoved, "report") + " removed",
    e.eventsScrubbed && plural(e.eventsScrubbed, "event") + " rewritten",
  ].filter(Boolean);
  if (!e.profileRemoved && done.length === 0) return `Nothing was left to erase for ${name} (${e.readerId}).`;
  return `Erased ${name} (${e.readerId})${done.length ? `: ${done.join(", ")}` : ""}. Their profile is gone; any ban on them is kept.`;
}

export function ReaderPrivacy({
  id,
  name,
  comments,
  onErased,
}: {
  id: string;
  name: string;
  comments: number;
  onErased: (e: Erasure) => void;
}) {
  const mode = useLoad(() => gql(ReaderErasureModeDocument));
  const action = useAction();
  const [asking, setAsking] = useState(false);
  const erasure = mode.data?.settings.privacy.erasure;
  const eraseButton = useRef<HTMLButtonElement>(null);

  const exportData = () =>
    void action.run(async () => {
      const d = await gql(ReaderExportDocument, { id });
      const url = URL.createObjectURL(new Blob([JSON.stringify(d.readerExport, null, 2)], { type: "application/json" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = fileName(id);
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const erase = () =>
    void action.run(async () => {
      const d = await gql(EraseReaderDocument, { id });
      setAsking(false);
      onErased(d.eraseReader);
    });

  return (
    <>
      <h2>Privacy</h2>
      <p class="hint">
        Their data on request (GDPR articles 15, 17 and 20): Export downloads everything held about them as JSON; Erase removes it for good.
      </p>
      <ErrorMessage error={mode.error ?? (asking ? null : action.error)} />
      <div class="actions">
        <button type="button" class="btn-plain" disabled={action.busy} onClick={exportData}>
          Export
        </button>
        <button ref={eraseButton} type="button" class="btn-delete" disabled={action.busy || !erasure} onClick={() => setAsking(true)}>
          Erase
        </button>
      </div>
      {asking && erasure && (
        <EraseDialog
          name={name}
          id={id}
          comments={comments}
          mode={erasure}
          busy={action.busy}
          error={action.error}
          onConfirm={erase}
          onCancel={() => {
            action.setError(null);
            setAsking(false);
            // back where the operator was, as closing a modal dialog does
            setTimeout(() => eraseButton.current?.focus());
          }}
        />
      )}
    </>
  );
}

function EraseDialog({
  name,
  id,
  comments,
  mode,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  name: string;
  id: string;
  comments: number;
  mode: "anonymize" | "delete";
  busy: boolean;
  error: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const theirs = comments === 0 ? "They have no comments." : `Their ${plural(comments, "comment")}`;
  return (
    <dialog
      ref={ref}
      class="panel erase-dialog"
      aria-labelledby="erase-title"
      aria-describedby="erase-what"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="erase-title">Erase {name}?</h2>
      <div id="erase-what">
        <p>
          Reader <code>{id}</code>. This cannot be undone.
        </p>
        <p>
          {comments === 0
            ? theirs
            : mode === "anonymize"
              ? `${theirs} stay in their threads with the body replaced by “[erased]” and no author (this tenant's privacy.erasure: anonymize).`
              : `${theirs} are removed; one with replies under it stays as an empty, authorless tombstone so the replies keep their thread (this tenant's privacy.erasure: delete).`}
        </p>
        <p>
          Their profile, their reactions (counts are corrected) and the reports they made are deleted, and every event that carried their
          data is rewritten, so no stream replay, webhook redelivery or export returns it. Readers' streams and webhooks are told as for a
          deletion. Bans and suspensions on them are kept.
        </p>
      </div>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
          {busy ? "Erasing…" : `Erase ${name}`}
        </button>
        <button type="button" class="btn-plain" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
