// The audit log: who (an operator's email, a key's label) did what to which resource, when, and for a
// settings change which fields changed from what to what; paged, filterable by actor and action.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import { AuditLogDocument } from "../gql/graphql";
import { ErrorMessage, useLoad, usePages } from "../ui";

/** A changed value as text: numbers and words as they are, lists joined, anything else as JSON. */
const shown = (v: unknown): string =>
  v === null || v === undefined
    ? "—"
    : Array.isArray(v)
      ? v.length === 0
        ? "(none)"
        : v.map(String).join(", ")
      : typeof v === "object"
        ? JSON.stringify(v)
        : String(v);

export function AuditScreen() {
  const [filters, setFilters] = useState({ actor: "", action: "" });
  const pages = usePages();
  const cursor = pages.cursor;
  const log = useLoad(
    () => gql(AuditLogDocument, { actor: filters.actor || null, action: filters.action || null, after: cursor }),
    [filters.actor, filters.action, cursor],
  );
  const rows = log.data?.auditLog.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="toolbar"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          pages.reset();
          setFilters({ actor: String(f.get("actor") ?? "").trim(), action: String(f.get("action") ?? "").trim() });
        }}
      >
        <label>
          Actor
          <input name="actor" placeholder="email, key id or admin" defaultValue={filters.actor} />
        </label>
        <label>
          Action
          <input name="action" placeholder="e.g. api_key.create or webhook." defaultValue={filters.action} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorMessage error={log.error} />
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Resource</th>
              <th scope="col">Changes</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <td>{when(r.at)}</td>
                <td>
                  {r.actor.label ?? r.actor.id}{" "}
                  <span class="muted">
                    (
                    {r.actor.type === "key"
                      ? `key ${r.actor.id}`
                      : r.actor.type === "admin" && r.actor.label === null
                        ? "admin JWT"
                        : r.actor.type}
                    )
                  </span>
                </td>
                <td>
                  <code>{r.action}</code>
                </td>
                <td>
                  {r.resource.type} {r.resource.id && <code>{r.resource.id}</code>}
                </td>
                <td>
                  {r.changes.length > 0 && (
                    <ul class="changes">
                      {r.changes.map((c) => (
                        <li key={c.field}>
                          <code>{c.field}</code>: {shown(c.from)} → {shown(c.to)}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!log.loading && rows.length === 0 && <p>Nothing recorded yet.</p>}
      {pages.pager(log.data?.auditLog.pageInfo)}
    </section>
  );
}
