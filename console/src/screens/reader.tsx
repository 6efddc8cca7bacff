// A reader's page (#/readers/<id>), reached from any comment's author: who they are, their comments
// by status, the open reports against their comments, the ban or suspension in force, and their
// latest comments with status and reason. "Ban" (until lifted) and "Suspend" (until a date and time)
// each ask for a reason and whether to reject the reader's pending comments too; "Lift ban" ends
// either. Their email: whether the service holds an address for them (never the address itself) and
// how often they hear of replies, by their own choice or the tenant's default; the discussions they
// follow or silenced and their inbox's size. Owners also get Export
// and Erase (reader-privacy.tsx). Their badge (contract section 21): shown by the name, with where it
// came from; a moderator sets one (it wins over the identity's claim) or clears it. How they signed
// in: through the service's hosted sign-in (an email link, a provider, as a guest; contract section
// 20) and when, or "Identified by the site" for a reader the site's own sign-in names. Their trust
// level (contract section 21) with Trust / Premoderate / Back to default, and a Shadow ban beside Ban
// and Suspend.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  BanReaderDocument,
  LiftReaderBanDocument,
  ReaderDocument,
  SetReaderTrustDocument,
  UpdateReaderBadgeDocument,
  type ReaderPageFragment,
  type TrustLevel,
} from "../gql/graphql";
import { ErrorMessage, Notice, useAction, useLoad } from "../ui";
import {
  CommentActions,
  CommentBody,
  DiscussionLink,
  ModerationReason,
  ReaderBadge,
  StatusBadge,
  doneLabel,
  plural,
  runCommentAction,
  type CommentAction,
} from "../comments";
import { ReaderPrivacy, erasureText } from "./reader-privacy";

type Asking = "ban" | "suspend" | "shadow" | null;

const TRUST_LABEL: Record<TrustLevel, string> = { trusted: "Trusted", default: "Default", premoderated: "Premoderated" };

/** What each trust level does to the reader's comments (contract section 21; docs/safety.md). */
const TRUST_TEXT: Record<TrustLevel, string> = {
  trusted:
    "Trusted: their comments skip the new-reader hold, suspect words, the link limit, the hook, Akismet and pre-moderation (banned words still reject).",
  default: "Default: the site's rules apply to their comments.",
  premoderated: "Premoderated: every comment they post waits in the moderation queue.",
};

/** A datetime-local value (the browser's time zone) as ISO 8601; "" when it is not a date. */
const isoOf = (local: string) => {
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
};
/** The datetime-local value `hours` from now. */
const localIn = (hours: number) => {
  const d = new Date(Date.now() + hours * 3_600_000);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function ReaderScreen({ id, owner = false }: { id: string; owner?: boolean }) {
  const profile = useLoad(() => gql(ReaderDocument, { id }), [id]);
  const action = useAction();
  const [asking, setAsking] = useState<Asking>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const r = profile.data?.reader;
  const show = (p: ReaderPageFragment, msg: string) => {
    profile.setData({ reader: p });
    setAsking(null);
    setNotice(msg);
  };

  const sanction = (form: HTMLFormElement, kind: "ban" | "suspend" | "shadow", who: ReaderPageFragment) => {
    const f = new FormData(form);
    const until = kind === "suspend" ? isoOf(String(f.get("until") ?? "")) : null;
    const reason = String(f.get("reason") ?? "").trim() || null;
    const rejectPending = f.get("rejectPending") === "on";
    if (kind === "suspend" && !until) {
      action.setError("Choose the date and time the suspension ends.");
      return;
    }
    void action.run(async () => {
      const shadow = kind === "shadow";
      const d = await gql(BanReaderDocument, { id, input: { until, reason, rejectPending, shadow } });
      const rejected = rejectPending ? ` Their pending comments were rejected.` : "";
      show(
        d.banReader,
        kind === "ban"
          ? `Banned ${who.name} until lifted.${rejected}`
          : shadow
            ? `Shadow-banned ${who.name} until lifted.${rejected}`
            : `Suspended ${who.name} until ${when(until)}.${rejected}`,
      );
    });
  };
  const lift = (who: ReaderPageFragment) =>
    void action.run(async () => show((await gql(LiftReaderBanDocument, { id })).liftReaderBan, `Lifted the ban on ${who.name}.`));
  const setTrust = (level: TrustLevel) =>
    void action.run(async () => {
      const d = await gql(SetReaderTrustDocument, { id, level });
      show(d.setReaderTrust, `${d.setReaderTrust.name} is now ${TRUST_LABEL[level].toLowerCase()}.`);
    });
  const setBadge = (badge: string | null) =>
    void action.run(async () => {
      const d = await gql(UpdateReaderBadgeDocument, { id, badge });
      show(d.updateReader, badge ? `Set the badge "${d.updateReader.badge ?? ""}".` : "Cleared the badge.");
    });
  const moderate = (c: ReaderPageFragment["recentComments"][number], a: CommentAction) =>
    void action.run(async () => {
      await runCommentAction(c.id, a);
      setNotice(`${doneLabel(a)} the comment in ${c.discussionTitle ?? c.discussionId}.`);
      profile.reload();
    });

  return (
    <section aria-labelledby="reader-title">
      <p>
        <a href="#/moderation">← Moderation queue</a>
      </p>
      <h1 id="reader-title">
        {r ? r.name : "Reader"}
        {r?.badge && (
          <>
            {" "}
            <ReaderBadge badge={r.badge} />
          </>
        )}
      </h1>
      <ErrorMessage error={profile.error ?? action.error} />
      {notice && <Notice>{notice}</Notice>}
      {r && (
        <>
          <p>
            Reader <code>{r.id}</code> · first seen {when(r.createdAt)}
          </p>
          <p class="sign-in-method">{signInText(r.signIn)}</p>
          <p class="counts">
            {plural(r.commentCounts.approved, "published comment")} · {r.commentCounts.pending} pending · {r.commentCounts.rejected}{" "}
            rejected · {r.commentCounts.deleted} deleted
          </p>
          <ReaderBadgeForm r={r} busy={action.busy} onSet={setBadge} />
          <ReaderEmail r={r} />
          <ReaderFollowing r={r} />
          <h2>Reports against them</h2>
          <p>
            {r.openReports === 0
              ? "No open reports against their comments."
              : `${plural(r.openReports, "open report")} against their comments.`}{" "}
            <a href="#/moderation/reported">Reported comments</a>
          </p>
          <h2>Trust</h2>
          <p class="trust-level">{TRUST_TEXT[r.trustLevel]}</p>
          <div class="actions">
            {r.trustLevel !== "trusted" && (
              <button type="button" disabled={action.busy} onClick={() => setTrust("trusted")}>
                Trust
              </button>
            )}
            {r.trustLevel !== "premoderated" && (
              <button type="button" class="btn-reject" disabled={action.busy} onClick={() => setTrust("premoderated")}>
                Premoderate
              </button>
            )}
            {r.trustLevel !== "default" && (
              <button type="button" class="btn-plain" disabled={action.busy} onClick={() => setTrust("default")}>
                Back to default
              </button>
            )}
          </div>
          <h2>Ban or suspension</h2>
          <SanctionText r={r} />
          {asking ? (
            <form
              class="panel"
              aria-label={asking === "ban" ? `Ban ${r.name}` : asking === "shadow" ? `Shadow ban ${r.name}` : `Suspend ${r.name}`}
              onSubmit={(e) => {
                e.preventDefault();
                sanction(e.currentTarget, asking, r);
              }}
            >
              <p>
                {asking === "ban"
                  ? `${r.name} will not be able to post, edit, react or report until the ban is lifted.`
                  : asking === "shadow"
                    ? `${r.name} will go on posting, but until the ban is lifted only they will see their new comments: to everyone else they never appear.`
                    : `${r.name} will not be able to post, edit, react or report until the time you choose.`}
              </p>
              {asking === "suspend" && (
                <label>
                  Suspended until
                  <input name="until" type="datetime-local" required min={localIn(0)} defaultValue={localIn(24)} />
                </label>
              )}
              <label>
                Reason (for moderators, optional)
                <textarea name="reason" rows={2} maxLength={500} />
              </label>
              <label class="check">
                <input name="rejectPending" type="checkbox" />
                Also reject their pending comments
              </label>
              <div class="actions">
                <button type="submit" class="danger" disabled={action.busy}>
                  {asking === "ban" ? "Confirm ban" : asking === "shadow" ? "Confirm shadow ban" : "Confirm suspension"}
                </button>
                <button type="button" class="btn-plain" onClick={() => setAsking(null)}>
                  Cancel
                </button>
              </div>
            </form>
          ) : (
            <div class="actions">
              <button type="button" class="danger" disabled={action.busy} onClick={() => setAsking("ban")}>
                Ban
              </button>
              <button type="button" class="btn-reject" disabled={action.busy} onClick={() => setAsking("suspend")}>
                Suspend
              </button>
              <button type="button" class="btn-reject" disabled={action.busy} onClick={() => setAsking("shadow")}>
                Shadow ban
              </button>
              {r.sanction && (
                <button type="button" class="btn-plain" disabled={action.busy} onClick={() => lift(r)}>
                  Lift ban
                </button>
              )}
            </div>
          )}
          {owner && (
            <ReaderPrivacy
              id={r.id}
              name={r.name}
              comments={r.commentCounts.approved + r.commentCounts.pending + r.commentCounts.rejected + r.commentCounts.deleted}
              onErased={(e) => {
                // nothing of theirs is left to show: only what was done
                profile.setData(null);
                setAsking(null);
                setNotice(erasureText(r.name, e));
              }}
            />
          )}
          <h2>Latest comments</h2>
          {r.recentComments.length === 0 && <p>No comments yet.</p>}
          <ul class="thread" aria-label={`${r.name}'s latest comments, newest first`}>
            {r.recentComments.map((c) => (
              <li
                key={c.id}
                class={`status-${c.status}`}
                aria-label={`Comment in ${c.discussionTitle ?? c.discussionId}, ${c.status === "approved" ? "published" : c.status}`}
              >
                <div class="meta">
                  <StatusBadge status={c.status} /> <DiscussionLink c={c} /> · <time dateTime={c.createdAt}>{when(c.createdAt)}</time>
                </div>
                <CommentBody c={c} />
                <ModerationReason reason={c.moderationReason} />
                <CommentActions c={c} busy={action.busy} onAction={(a) => moderate(c, a)} onBlocked={() => profile.reload()} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** How the reader last signed in: a hosted method and when, or by the site's own sign-in. */
function signInText(s: ReaderPageFragment["signIn"]): string {
  if (!s) return "Identified by the site (its own sign-in or identity provider).";
  const how =
    s.method === "email"
      ? "with an email link"
      : s.method === "guest"
        ? "as a guest"
        : s.method === "passkey"
          ? "with a passkey"
          : `with ${s.providerLabel ?? s.provider ?? "a provider"}${s.providerLabel && s.provider ? ` (${s.provider})` : ""}`;
  return s.at ? `Signed in ${how}, ${when(s.at)}.` : `Signed in ${how} (signed out since).`;
}

function SanctionText({ r }: { r: ReaderPageFragment }) {
  const s = r.sanction;
  if (!s) return <p>No ban or suspension: {r.name} can post.</p>;
  return (
    <p class="sanction">
      <strong>
        {s.shadow
          ? s.until
            ? `Shadow-banned until ${when(s.until)}`
            : "Shadow-banned until lifted"
          : s.until
            ? `Suspended until ${when(s.until)}`
            : "Banned until lifted"}
      </strong>{" "}
      (since {when(s.createdAt)}){s.reason ? `. Reason: ${s.reason}` : ". No reason given."}
    </p>
  );
}

const EMAIL_STATUS: Record<ReaderPageFragment["emailStatus"], string> = {
  none: "No address",
  verified: "Verified address",
  suppressed: "Suppressed (the mail server refused it)",
};

/** Whether reply emails can reach the reader (the address itself is never shown) and how often they go. */
/** What they follow (and silenced), and how big their inbox is. */
function ReaderFollowing({ r }: { r: ReaderPageFragment }) {
  return (
    <>
      <h2>Following and inbox</h2>
      <p>
        {r.followingCount === 0 ? "Follows no discussion." : `Follows ${plural(r.followingCount, "discussion")}.`} Their inbox holds{" "}
        {plural(r.inboxItems, "item")}, {r.inboxUnread} unread.
      </p>
      {r.following.length > 0 && (
        <ul aria-label="Discussions they follow or silenced">
          {r.following.map((f) => (
            <li key={f.discussionId}>
              {f.title ?? f.discussionId} <code>{f.discussionId}</code> · {f.mode === "all" ? "following" : "silenced"} since{" "}
              {when(f.since)}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function ReaderEmail({ r }: { r: ReaderPageFragment }) {
  return (
    <dl class="reader-email">
      <dt>Email</dt>
      <dd>{EMAIL_STATUS[r.emailStatus]}</dd>
      <dt>Reply emails</dt>
      <dd>
        {r.replyEmails} {r.replyEmailsChosen ? "(reader's choice)" : "(tenant default)"}
      </dd>
    </dl>
  );
}

/** The badge by the reader's name: where it came from, and a moderator's own to set or clear. */
function ReaderBadgeForm({ r, busy, onSet }: { r: ReaderPageFragment; busy: boolean; onSet: (badge: string | null) => void }) {
  const source = r.badgeSource === "moderator" ? "set by a moderator" : "from their identity";
  return (
    <form
      class="inline"
      aria-label="Badge"
      onSubmit={(e) => {
        e.preventDefault();
        onSet(String(new FormData(e.currentTarget).get("badge") ?? "").trim() || null);
      }}
    >
      <p>{r.badge ? `Badge "${r.badge}", ${source}.` : "No badge."}</p>
      <label>
        Badge (up to 20 characters; wins over their identity's until cleared)
        <input name="badge" maxLength={20} defaultValue={r.badgeSource === "moderator" ? (r.badge ?? "") : ""} key={r.badge ?? ""} />
      </label>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Set badge
        </button>
        {r.badge && (
          <button type="button" class="btn-plain" disabled={busy} onClick={() => onSet(null)}>
            Clear badge
          </button>
        )}
      </div>
    </form>
  );
}
