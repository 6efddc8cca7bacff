// The forms of <engagement-thread>: the composer (a new comment or a reply), editing one's own
// comment, confirming a delete and reporting a comment. Each form's state (draft, error, busy) is
// kept under its key ("new", "reply:<id>", "edit:<id>", "delete:<id>", "report:<id>"); its field is
// `field-<key>`, labelled and described for screen readers, and its error is an alert. The composer
// and the edit form write in a Write tab beside a Preview tab (embed/src/thread/compose.ts).
import { html, nothing, type TemplateResult } from "lit";
import { previewError, writeOrPreview, type PreviewState } from "./compose.js";
import { fill, type Strings } from "./i18n.js";
import type { Comment } from "./store.js";

const REPORT_REASONS = ["spam", "abuse", "off_topic", "other"] as const;

/** What the forms show and what they do (the element's ThreadWrites). */
export interface Forms {
  readonly drafts: ReadonlyMap<string, string>;
  readonly errors: ReadonlyMap<string, string>;
  readonly busy: ReadonlySet<string>;
  readonly reportReason: string;
  setDraft(formKey: string, value: string): void;
  submit(formKey: string, parentId: string | null): Promise<void>;
  saveEdit(id: string): Promise<void>;
  deleteOwn(id: string): Promise<void>;
  sendReport(id: string): Promise<void>;
  chooseReason(reason: string): void;
  closeReply(id: string): void;
  closeEdit(id: string): void;
  closeDelete(id: string): void;
  closeReport(id: string): void;
}

/** What a form is drawn from: the words, the forms' state, and the reader. */
export interface FormContext {
  readonly t: Strings;
  readonly forms: Forms;
  readonly previews: PreviewState;
  readonly maxBodyLength: number;
  readonly signedIn: boolean;
}

const draftInput = (f: Forms, formKey: string) => (e: Event) => f.setDraft(formKey, (e.target as HTMLTextAreaElement).value);

/**
 * A composer: its text field with the Write/Preview tabs, the hint and the buttons. Given `unfold`, an
 * empty composer shows folded, its text field one line high and nothing else, until the reader
 * moves into it (which calls `unfold`).
 */
export function composer(
  v: FormContext,
  formKey: string,
  parentId: string | null,
  label: string,
  submitLabel: string,
  unfold: (() => void) | null = null,
): TemplateResult {
  const { t, forms: f } = v;
  const busy = f.busy.has(formKey);
  const draft = f.drafts.get(formKey) ?? "";
  const error = f.errors.get(formKey) ?? previewError(v.previews, formKey, draft);
  const left = v.maxBodyLength - draft.length;
  const folded = !!unfold && !draft && !error;
  return html`<form
    part="composer"
    class=${folded ? "folded" : ""}
    @focusin=${() => {
      if (folded) unfold?.();
    }}
    @submit=${(e: Event) => {
      e.preventDefault();
      void v.previews.show(formKey, "write", "");
      void f.submit(formKey, parentId);
    }}
  >
    ${writeOrPreview(
      t,
      v.previews,
      formKey,
      () => f.drafts.get(formKey) ?? "",
      html`<label class="sr-only" for=${`field-${formKey}`}>${label}</label>
        <textarea
          id=${`field-${formKey}`}
          part="textarea"
          placeholder=${parentId ? label : t.composer_placeholder}
          rows=${folded ? "1" : nothing}
          .value=${draft}
          aria-invalid=${error ? "true" : "false"}
          aria-describedby=${`hint-${formKey}`}
          @input=${draftInput(f, formKey)}
        ></textarea>`,
    )}
    <div class="form-row">
      <span class="hint" id=${`hint-${formKey}`}
        >${left < 200 ? fill(t.characters_left, { n: left }) : v.signedIn || error === t.sign_in ? "" : t.sign_in}</span
      >
      ${
        parentId
          ? html`<button type="button" class="secondary" part="button" @click=${() => f.closeReply(parentId)}>${t.cancel}</button>`
          : nothing
      }
      <button type="submit" class="primary" part="button submit" ?disabled=${busy}>${busy ? t.posting : submitLabel}</button>
    </div>
    ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}
  </form>`;
}

export function editForm(v: FormContext, c: Comment): TemplateResult {
  const { t, forms: f } = v;
  const formKey = `edit:${c.id}`;
  const busy = f.busy.has(formKey);
  const draft = f.drafts.get(formKey) ?? c.body;
  const error = f.errors.get(formKey) ?? previewError(v.previews, formKey, draft);
  return html`<form
    part="composer"
    @submit=${(e: Event) => {
      e.preventDefault();
      void v.previews.show(formKey, "write", "");
      void f.saveEdit(c.id);
    }}
  >
    ${writeOrPreview(
      t,
      v.previews,
      formKey,
      () => f.drafts.get(formKey) ?? c.body,
      html`<label class="sr-only" for=${`field-${formKey}`}>${t.edit_label}</label>
        <textarea id=${`field-${formKey}`} part="textarea" .value=${draft} @input=${draftInput(f, formKey)}></textarea>`,
    )}
    <div class="form-row">
      <button type="button" class="secondary" part="button" @click=${() => f.closeEdit(c.id)}>${t.cancel}</button>
      <button type="submit" class="primary" part="button submit" ?disabled=${busy}>${t.save}</button>
    </div>
    ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}
  </form>`;
}

export function deleteConfirm(v: FormContext, id: string): TemplateResult {
  const { t, forms: f } = v;
  return html`<div class="form-row" role="group" aria-label=${t.delete_confirm}>
    <span class="hint">${t.delete_confirm}</span>
    <button class="secondary" part="button" data-action="keep" @click=${() => f.closeDelete(id)}>${t.delete_no}</button>
    <button
      class="primary"
      part="button"
      data-action="confirm-delete"
      ?disabled=${f.busy.has(`delete:${id}`)}
      @click=${() => void f.deleteOwn(id)}
    >
      ${t.delete_yes}
    </button>
  </div>`;
}

export function reportForm(v: FormContext, id: string): TemplateResult {
  const { t, forms: f } = v;
  const formKey = `report:${id}`;
  return html`<form
    part="report"
    @submit=${(e: Event) => {
      e.preventDefault();
      void f.sendReport(id);
    }}
  >
    <fieldset>
      <legend>${t.report_title}</legend>
      ${REPORT_REASONS.map(
        (r) =>
          html`<label
            ><input type="radio" name=${`reason-${id}`} value=${r} .checked=${f.reportReason === r} @change=${() => f.chooseReason(r)} />
            ${t[`reason_${r}`]}</label
          >`,
      )}
      <label class="sr-only" for=${`field-${formKey}`}>${t.report_note}</label>
      <textarea
        id=${`field-${formKey}`}
        placeholder=${t.report_note}
        .value=${f.drafts.get(formKey) ?? ""}
        @input=${draftInput(f, formKey)}
      ></textarea>
      <div class="form-row">
        <button type="button" class="secondary" part="button" @click=${() => f.closeReport(id)}>${t.cancel}</button>
        <button type="submit" class="primary" part="button submit" ?disabled=${f.busy.has(formKey)}>${t.report_send}</button>
      </div>
    </fieldset>
  </form>`;
}
