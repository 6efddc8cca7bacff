// The audit log: who did what to which resource, when; paged, filterable by actor and action.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import { AuditLogDocument } from "../gql/graphql";
import { ErrorMessage, useLoad, usePages } from "../ui";

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
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <td>{when(r.at)}</td>
                <td>
                  {r.actor.label ?? r.actor.id} <span class="muted">({r.actor.type})</span>
                </td>
                <td>
                  <code>{r.action}</code>
                </td>
                <td>
                  {r.resource.type} {r.resource.id && <code>{r.resource.id}</code>}
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
