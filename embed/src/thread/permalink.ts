// Permalinks in <engagement-thread> (contract section 18): which comment the element opens at (the
// page's `#comment-<id>`, else its `comment-id` attribute), marking and scrolling to it once the
// thread shows it, and each comment's address for its Link action (copied to the clipboard, said in
// the live region). The address is the one reply emails link to (commentLink in
// src/modules/email/templates.ts): `<discussion url>#comment-<id>`, here the element's
// `discussion-url` or else the page's own URL (the rules of both: embed/src/thread/address.ts).
import { commentAddress, commentAnchor, commentIdFromHash } from "./address.js";

/** Copies a text: the Clipboard API, else a selected textarea and `execCommand("copy")`. */
export async function copyText(text: string, root: Node): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // no Clipboard API here (an insecure origin, a refused permission): the older way
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "sr-only";
  (root instanceof ShadowRoot ? root : document.body).append(area);
  area.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

/** What the permalinks need from the element. */
export interface PermalinkHost {
  /** the element's `comment-id` attribute */
  commentId(): string | null;
  /** the element's `discussion-url` attribute */
  discussionUrl(): string | null;
  /** the element's shadow root, where the comments are */
  root(): HTMLElement | DocumentFragment;
  /** resolves once what was asked to be drawn is drawn */
  updated(): Promise<unknown>;
  /** loads the thread again (at the comment to open at, when there is one) */
  load(): Promise<void>;
  /** whether the thread shows the comment now */
  shows(id: string): boolean;
  requestUpdate(): void;
}

export class Permalinks {
  /** the comment shown marked (`part="comment highlighted"`) */
  highlighted: string | null = null;
  /** the reader chose to read from the start: loads no longer open at the comment (until the hash names one again) */
  private fromStart = false;
  /** the comment to scroll to once the thread shows it (once per time it is asked for) */
  private scrollTo: string | null = null;
  private readonly onHash = () => this.retarget();

  constructor(private readonly host: PermalinkHost) {}

  /** The comment the thread opens at: the page's `#comment-<id>`, else the `comment-id` attribute. */
  target(): string | null {
    return commentIdFromHash(location.hash) ?? (this.host.commentId() || null);
  }

  /** What a load opens at (null: the first page). */
  openAt(): string | null {
    return this.fromStart ? null : this.target();
  }

  connect(): void {
    window.addEventListener("hashchange", this.onHash);
    this.scrollTo = this.target();
  }

  disconnect(): void {
    window.removeEventListener("hashchange", this.onHash);
  }

  /** The hash or the `comment-id` attribute changed: mark and scroll to the comment, loading its page when it is not shown. */
  retarget(): void {
    const id = this.target();
    if (!id) return;
    this.fromStart = false;
    this.scrollTo = id;
    if (this.host.shows(id)) this.arrived(id, true);
    else void this.host.load();
  }

  /** The reader asked for the thread from its start. */
  readFromStart(): Promise<void> {
    this.fromStart = true;
    return this.host.load();
  }

  /**
   * A load that opened at `id` is shown, and the thread shows the comment or not: marks it and, the
   * first time it is asked for, scrolls to it. Answers whether the reader is to be told it is missing
   * (once each time it is asked for).
   */
  arrived(id: string, shown: boolean): boolean {
    const first = this.scrollTo === id;
    if (first) this.scrollTo = null;
    if (!shown) return first;
    this.highlighted = id;
    this.host.requestUpdate();
    if (first) void this.reveal(id);
    return false;
  }

  private async reveal(id: string): Promise<void> {
    await this.host.updated();
    const el = this.host.root().querySelector<HTMLElement>(`#${CSS.escape(commentAnchor(id))}`);
    el?.scrollIntoView({ block: "center" });
  }

  /** The Link action: copies the comment's address; answers it and whether it was copied. */
  async copy(id: string): Promise<{ address: string; copied: boolean }> {
    const address = commentAddress(location.href, this.host.discussionUrl(), id);
    const root = this.host.root();
    return { address, copied: await copyText(address, root instanceof ShadowRoot ? root : document) };
  }
}
