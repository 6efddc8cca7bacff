// The Outbox (#/outbox, owners; in the navigation only while the service runs with EMAIL_OUTBOX=1):
// the emails the service wrote and kept instead of sending, newest first, 20 a page
// (emailMessages(state: "outbox")). Selecting one shows its plain-text part; the HTML part is shown
// as source text in a collapsed <details>, never rendered as HTML.
import { useEffect, useRef, useState } from "preact/hooks";
import { gql, when } from "../api";
import { OutboxDocument, type OutboxQuery } from "../gql/graphql";
import { ErrorMessage, useLoad, usePages } from "../ui";
import { plural } from "../comments";

type Message = OutboxQuery["emailMessages"]["edges"][number]["node"];

const kindText = (m: Message) => {
  const replies = plural(m.itemCount, "reply", "replies");
  return m.kind === "digest" ? `daily digest (${replies})` : m.kind === "replies" ? `reply email (${replies})` : m.kind;
};

export function OutboxScreen({ mode }: { mode: string | undefined }) {
  const pages = usePages();
  const list = useLoad(() => gql(OutboxDocument, { after: pages.cursor }), [pages.cursor]);
  const [selected, setSelected] = useState<string | null>(null);
  const messages = list.data?.emailMessages.edges.map((e) => e.node) ?? [];
  const open = messages.find((m) => m.id === selected);
  return (
    <section aria-labelledby="outbox-title">
      <h1 id="outbox-title">Outbox</h1>
      <p class="hint">
        {mode === "outbox"
          ? "The service runs with EMAIL_OUTBOX=1: the emails readers would have received are kept here, newest first, and not sent."
          : "Emails kept instead of sent (EMAIL_OUTBOX=1). The service does not keep them now: new emails are not added here."}
      </p>
      <ErrorMessage error={list.error} />
      {list.loading && !list.data && <p class="loading">Loading…</p>}
      {list.data && messages.length === 0 && <p>The Outbox is empty: no email has been written yet.</p>}
      {messages.length > 0 && (
        <div class="outbox">
          <div>
            <ul class="outbox-list" aria-label="Emails in the Outbox, newest first">
              {messages.map((m) => (
                <li key={m.id} class={m.id === selected ? "selected" : undefined}>
                  <button
                    type="button"
                    class="subject"
                    aria-current={m.id === selected ? "true" : undefined}
                    aria-controls="outbox-message"
                    onClick={() => setSelected(m.id)}
                  >
                    {m.subject}
                  </button>
                  <div class="meta">
                    To <span class="to">{m.to}</span> · {kindText(m)} · <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
                  </div>
                </li>
              ))}
            </ul>
            {pages.pager(list.data?.emailMessages.pageInfo)}
          </div>
          <div id="outbox-message" class="outbox-message">
            {open ? <MessageView m={open} /> : <p class="hint">Choose an email to read it.</p>}
          </div>
        </div>
      )}
    </section>
  );
}

function MessageView({ m }: { m: Message }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // the message is shown beside (or, on a narrow screen, below) the list: take the reader there
  useEffect(() => heading.current?.focus(), [m.id]);
  return (
    <article aria-labelledby="outbox-subject">
      <h2 id="outbox-subject" tabIndex={-1} ref={heading}>
        {m.subject}
      </h2>
      <dl class="token-reader">
        <dt>To</dt>
        <dd>{m.to}</dd>
        <dt>Kind</dt>
        <dd>{kindText(m)}</dd>
        <dt>Written</dt>
        <dd>
          <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
        </dd>
      </dl>
      <h3>Plain text</h3>
      <pre class="email-text">{m.text}</pre>
      <details class="email-html">
        {/* the HTML part as its source text: Preact escapes it, nothing of it is rendered */}
        <summary>HTML part (source)</summary>
        <pre class="email-text">{m.html}</pre>
      </details>
    </article>
  );
}
