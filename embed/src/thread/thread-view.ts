// What the thread is drawn from (view.ts and the parts it draws: page-reactions.ts, votes.ts), as
// the element (../thread.ts) has it now: types only.
import type { nothing, TemplateResult } from "lit";
import type { ReaderSettings } from "./api.js";
import type { FormContext, Forms } from "./forms.js";
import type { Comment, ThreadStore } from "./store.js";

/** What the reader opens and does on a comment, besides the forms (the element's ThreadWrites). */
export interface CommentActions extends Forms {
  readonly replyTo: string | null;
  readonly editing: string | null;
  readonly confirmingDelete: string | null;
  readonly reporting: string | null;
  readonly reported: ReadonlySet<string>;
  readonly moreKinds: ReadonlySet<string>;
  react(comment: Comment, kind: string): Promise<void>;
  reactPage(kind: string): Promise<void>;
  vote(comment: Comment, value: 1 | -1): Promise<void>;
  expandKinds(id: string): void;
  openReply(id: string): void;
  openEdit(comment: Comment): void;
  openDelete(id: string): void;
  openReport(id: string): void;
}

/** Everything the thread is drawn from, as the element has it now. */
export interface ThreadView extends FormContext {
  readonly forms: CommentActions;
  readonly locale: string;
  readonly store: ThreadStore;
  readonly settings: ReaderSettings;
  readonly status: "loading" | "ready" | "failed";
  readonly live: boolean;
  /** the discussion's readers (open streams) as the stream last said; shown only when others read too */
  readonly reading: number;
  readonly notice: string | null;
  readonly announcement: string;
  readonly loadingMore: boolean;
  /** comments whose next replies are being loaded */
  readonly loadingReplies: ReadonlySet<string>;
  /** the comment a permalink opened the thread at, shown marked */
  readonly highlighted: string | null;
  /** the page shown begins at a permalink's thread (the comments before it are not loaded) */
  readonly openedAtThread: boolean;
  /** the new comment's composer shows folded (one line) until the reader moves into it: a server-rendered thread's */
  readonly composerFolded: boolean;
  /** the signed-in reader's Follow and bell (bell.ts), and the bell's list when open */
  readonly readerBar: TemplateResult | typeof nothing;
  readonly inboxList: TemplateResult | typeof nothing;
  readonly on: {
    copyLink(id: string): void;
    fromStart(): void;
    changeSort(value: string): void;
    retry(): void;
    loadMore(): void;
    loadReplies(parentId: string): void;
    showIncoming(): void;
    unfoldComposer(): void;
  };
}
