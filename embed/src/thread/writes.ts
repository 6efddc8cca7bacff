// What the reader does in <engagement-thread>: which form is open (a reply, an edit, a delete to
// confirm, a report), the drafts and their errors, and the writes the forms send (post, reply, edit,
// delete, react on a comment or on the page, report) as the reader the host page hands over. A post carries an idempotency key
// kept until its text changes, so a retry after a lost answer posts once. The forms themselves are
// drawn by embed/src/thread/forms.ts from what this keeps.
import type { ReaderSettings, ThreadApi, Viewer } from "./api.js";
import { draftProblem } from "./describe.js";
import type { Strings } from "./i18n.js";
import type { Comment, ThreadStore } from "./store.js";

/** The element as a write finds it when it runs (its store is replaced by each load). */
export interface WriteTarget {
  readonly api: ThreadApi | null;
  readonly discussionId: string | null;
  readonly store: ThreadStore;
  readonly viewer: Viewer | null;
  readonly settings: ReaderSettings;
  readonly t: Strings;
}

/** What the writes need from the element. */
export interface WritesHost {
  now(): WriteTarget;
  /** the reader's token; without one, the host page has been asked to sign the reader in */
  identityForWrite(): Promise<string | null>;
  describe(e: unknown): string;
  /** shows a notice above the comments */
  notify(text: string): void;
  /** reads a text out to screen readers */
  announce(text: string): void;
  focusLater(selector: string): Promise<void>;
  requestUpdate(): void;
  /** a comment of the reader's was posted (the first may have created the discussion) */
  posted(): void;
}

/** The page reactions' key among the forms' busy flags and errors. */
export const PAGE_REACTION = "react-page";

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class ThreadWrites {
  readonly drafts = new Map<string, string>();
  readonly errors = new Map<string, string>();
  readonly busy = new Set<string>();
  private readonly idempotencyKeys = new Map<string, string>();
  replyTo: string | null = null;
  editing: string | null = null;
  confirmingDelete: string | null = null;
  reporting: string | null = null;
  reportReason: string = "spam";
  readonly reported = new Set<string>();
  /** comments whose every reaction kind is shown */
  readonly moreKinds = new Set<string>();

  constructor(private readonly host: WritesHost) {}

  private get now(): WriteTarget {
    return this.host.now();
  }

  // ---------------------------------------------------------------- writing

  async submit(formKey: string, parentId: string | null): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    if (!api || !this.now.discussionId || this.busy.has(formKey)) return;
    const body = (this.drafts.get(formKey) ?? "").trim();
    if (!this.checkBody(formKey, body)) return;
    const identity = await host.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    const idempotencyKey = this.idempotencyKeys.get(formKey) ?? randomKey();
    this.idempotencyKeys.set(formKey, idempotencyKey);
    await this.busyWith(formKey, async () => {
      const comment = await api.post(this.now.discussionId ?? "", body, parentId, identity, idempotencyKey);
      this.drafts.delete(formKey);
      this.idempotencyKeys.delete(formKey);
      this.now.store.addOwn(comment);
      host.posted();
      if (comment.status === "pending") host.notify(this.now.t.pending_notice);
      if (parentId) {
        this.replyTo = null;
        await host.focusLater(`[data-action="reply"][data-for="${parentId}"]`);
      }
    });
  }

  async saveEdit(id: string): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    const formKey = `edit:${id}`;
    if (!api) return;
    const body = (this.drafts.get(formKey) ?? "").trim();
    if (!this.checkBody(formKey, body)) return;
    const identity = await host.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    await this.busyWith(formKey, async () => {
      const comment = await api.edit(id, body, identity);
      this.now.store.addOwn(comment);
      this.drafts.delete(formKey);
      this.editing = null;
      if (comment.status === "pending") host.notify(this.now.t.pending_notice);
      await host.focusLater(`[data-action="edit"][data-for="${id}"]`);
    });
  }

  async deleteOwn(id: string): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    if (!api) return;
    const identity = await host.identityForWrite();
    if (!identity) return;
    await this.busyWith(`delete:${id}`, async () => {
      this.now.store.apply({ type: "comment_deleted", data: { comment: await api.remove(id, identity) } });
      this.confirmingDelete = null;
    });
  }

  async react(comment: Comment, kind: string): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    if (!api) return;
    const identity = await host.identityForWrite();
    if (!identity) return;
    await this.busyWith(`react:${comment.id}`, async () => {
      const result = await api.react(comment.id, kind, identity);
      this.now.store.apply({
        type: "reaction_toggled",
        data: {
          reaction: { commentId: comment.id, readerId: this.now.viewer?.id ?? "", kind, active: result.active, counts: result.countMap },
        },
      });
    });
  }

  /** Toggles the reader's page reaction (the bar above the comments). */
  async reactPage(kind: string): Promise<void> {
    const api = this.now.api;
    const discussionId = this.now.discussionId;
    if (!api || !discussionId) return;
    const identity = await this.host.identityForWrite();
    if (!identity) return this.signInFirst(PAGE_REACTION);
    await this.busyWith(PAGE_REACTION, async () => {
      const result = await api.reactPage(discussionId, kind, identity);
      this.now.store.apply({
        type: "reaction_toggled",
        data: {
          reaction: {
            discussionId,
            commentId: null,
            readerId: this.now.viewer?.id ?? "",
            kind,
            active: result.active,
            counts: result.countMap,
          },
        },
      });
    });
  }

  /** Votes `value` on the comment; the vote the reader already gave (the same arrow again) takes it back. */
  async vote(comment: Comment, value: 1 | -1): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    if (!api) return;
    const identity = await host.identityForWrite();
    if (!identity) return;
    const next = comment.myVote === value ? 0 : value;
    await this.busyWith(`vote:${comment.id}`, async () => {
      const tally = await api.vote(comment.id, next, identity);
      this.now.store.apply({
        type: "reaction_toggled",
        data: { reaction: { commentId: comment.id, readerId: this.now.viewer?.id ?? "", kind: "vote", ...tally } },
      });
    });
  }

  async sendReport(id: string): Promise<void> {
    const host = this.host;
    const api = this.now.api;
    const formKey = `report:${id}`;
    if (!api) return;
    const identity = await host.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    await this.busyWith(formKey, async () => {
      await api.report(id, this.reportReason, (this.drafts.get(formKey) ?? "").trim(), identity);
      this.reported.add(id);
      this.reporting = null;
      this.drafts.delete(formKey);
      host.announce(this.now.t.reported);
      await host.focusLater(`[data-action="report"][data-for="${id}"]`);
    });
  }

  /** Drops the "sign in" errors of the forms once a reader is signed in. */
  forgetSignIn(): void {
    for (const [form, error] of this.errors) if (error === this.now.t.sign_in) this.errors.delete(form);
  }

  /** Asks the host page to sign the reader in; the form says so once (its hint becomes the alert). */
  private signInFirst(formKey: string): void {
    if (this.errors.get(formKey) === this.now.t.sign_in) return;
    this.errors.set(formKey, this.now.t.sign_in);
    this.host.requestUpdate();
  }

  private checkBody(formKey: string, body: string): boolean {
    const { t, settings } = this.now;
    const problem = draftProblem(body, settings.maxBodyLength, t);
    if (problem) this.fail(formKey, problem);
    return !problem;
  }

  private fail(formKey: string, message: string): void {
    this.errors.set(formKey, message);
    this.host.announce(message);
    this.host.requestUpdate();
  }

  /** Runs a write with its form marked busy; a refusal becomes the form's readable message. */
  private async busyWith(formKey: string, work: () => Promise<void>): Promise<void> {
    this.busy.add(formKey);
    this.errors.delete(formKey);
    this.host.requestUpdate();
    try {
      await work();
    } catch (e) {
      this.fail(formKey, this.host.describe(e));
    } finally {
      this.busy.delete(formKey);
      this.host.requestUpdate();
    }
  }

  // ---------------------------------------------------------------- opening and closing forms

  setDraft(formKey: string, value: string): void {
    this.drafts.set(formKey, value);
    // a changed text is a new comment: a retry of the old one would be refused as a different request
    this.idempotencyKeys.delete(formKey);
    if (this.errors.delete(formKey)) this.host.requestUpdate();
    else if (this.now.settings.maxBodyLength - value.length < 200) this.host.requestUpdate();
  }

  openReply(id: string): void {
    this.replyTo = id;
    this.show(`#field-reply\\:${CSS.escape(id)}`);
  }

  closeReply(id: string): void {
    this.replyTo = null;
    this.show(`[data-action="reply"][data-for="${id}"]`);
  }

  openEdit(c: Comment): void {
    this.editing = c.id;
    this.drafts.set(`edit:${c.id}`, c.body);
    this.show(`#field-edit\\:${CSS.escape(c.id)}`);
  }

  closeEdit(id: string): void {
    this.editing = null;
    this.drafts.delete(`edit:${id}`);
    this.show(`[data-action="edit"][data-for="${id}"]`);
  }

  openDelete(id: string): void {
    this.confirmingDelete = id;
    this.show(`[data-action="keep"]`);
  }

  closeDelete(id: string): void {
    this.confirmingDelete = null;
    this.show(`[data-action="delete"][data-for="${id}"]`);
  }

  openReport(id: string): void {
    this.reporting = id;
    this.reportReason = "spam";
    this.show(`input[name="reason-${CSS.escape(id)}"]`);
  }

  closeReport(id: string): void {
    this.reporting = null;
    this.show(`[data-action="report"][data-for="${id}"]`);
  }

  chooseReason(reason: string): void {
    this.reportReason = reason;
  }

  expandKinds(id: string): void {
    this.moreKinds.add(id);
    this.host.requestUpdate();
  }

  /** Draws the change, then moves the focus to what it opened or back to what opened it. */
  private show(focus: string): void {
    this.host.requestUpdate();
    void this.host.focusLater(focus);
  }
}
