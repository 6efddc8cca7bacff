// The Write/Preview tabs of <engagement-thread>'s forms (a new comment, a reply, an edit): which tab
// each form shows, the service's own rendering of its draft (GraphQL `preview(body:)`, what
// `POST /api/v1/preview` runs: the sanitized HTML a comment with that body would show) or the
// refusal, said as a post's would be, and whether its formatting help is open. Drawn by
// embed/src/thread/compose.ts; kept per form key, as the forms' drafts are (embed/src/thread/writes.ts).
import type { ThreadApi } from "./api.js";
import type { PreviewState, Rendered, Tab } from "./compose.js";
import { draftProblem } from "./describe.js";
import type { Strings } from "./i18n.js";

/** What the previews need from the element. */
export interface PreviewHost {
  now(): { api: ThreadApi | null; maxBodyLength: number; t: Strings };
  /** the reader's identity when there is one (a preview needs none) */
  identity(): Promise<string | null>;
  describe(e: unknown): string;
  requestUpdate(): void;
}

export class Previews implements PreviewState {
  private readonly tabs = new Map<string, Tab>();
  readonly rendered = new Map<string, Rendered>();
  readonly loading = new Set<string>();
  readonly helpOpen = new Set<string>();

  constructor(private readonly host: PreviewHost) {}

  tab(formKey: string): Tab {
    return this.tabs.get(formKey) ?? "write";
  }

  /** Shows a tab; the Preview tab renders the draft (once per text: the same text is not asked again). */
  async show(formKey: string, tab: Tab, draft: string): Promise<void> {
    this.tabs.set(formKey, tab);
    this.host.requestUpdate();
    const body = draft.trim();
    const before = this.rendered.get(formKey);
    if (tab !== "preview" || !body || (before?.body === body && before.html !== undefined)) return;
    const { api, maxBodyLength, t } = this.host.now();
    const problem = draftProblem(body, maxBodyLength, t);
    if (problem || !api) {
      this.rendered.set(formKey, { body, error: problem ?? t.err_network });
      return;
    }
    this.rendered.delete(formKey);
    this.loading.add(formKey);
    try {
      this.rendered.set(formKey, { body, html: await api.preview(body, await this.host.identity()) });
    } catch (e) {
      this.rendered.set(formKey, { body, error: this.host.describe(e) });
    } finally {
      this.loading.delete(formKey);
      this.host.requestUpdate();
    }
  }

  toggleHelp(formKey: string): void {
    if (!this.helpOpen.delete(formKey)) this.helpOpen.add(formKey);
    this.host.requestUpdate();
  }
}
