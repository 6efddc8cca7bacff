// Settings › General (#/settings, owners): how comments work — moderation, the edit window, length,
// auto-close, reaction kinds — how bodies are formatted (formatting.markdown, formatting.images),
// votes (off / up / updown) and page reactions (contract section 18), readers' inboxes and the
// allowed origins, in one form showing the server's current values, each setting's label and help as
// its description gives them (textOf); saving sends only the fields the operator changed (settings-fields.tsx). Then identity-secret rotation, asked first, saying how long
// the old secret keeps working (the new secret shown once). Webhook delivery, streams, rate limits and
// idempotency are the Delivery & limits view (settings-delivery.tsx); identity providers, sign-in,
// email, chat alerts and import/export the others (SettingsViews).
import { useState } from "preact/hooks";
import { gql } from "../api";
import { RotateIdentitySecretDocument, type AllSettingsFragment, type SettingsPatch, type VoteMode } from "../gql/graphql";
import { Copy, ErrorMessage, messageOf } from "../ui";
import { SettingsViews } from "./settings-views";
import { FieldError } from "../components/fields";
import { Field, Help, NUMBER_GROUPS, NumberGroups, describedBy, numberGroupsOf, textOf, useSettingsForm } from "./settings-fields";

/** The number groups this view holds; the rest are Delivery & limits'. */
const GENERAL_GROUPS = NUMBER_GROUPS.filter((g) => g.group === "inbox");

const VOTES: { value: VoteMode; label: string }[] = [
  { value: "off", label: "Off" },
  { value: "up", label: "Upvotes only" },
  { value: "updown", label: "Upvotes and downvotes" },
];

const kinds = (v: FormDataEntryValue | null) =>
  String(v ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);

export function SettingsScreen() {
  const { settings, s, errors, save, saveBar } = useSettingsForm();
  const [secret, setSecret] = useState<{ identitySecret: string; previousSecretExpiresAt?: unknown } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [rotateError, setRotateError] = useState<string | null>(null);

  const submit = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const num = (name: string) => Number(String(f.get(name) ?? "").trim());
    const edited: SettingsPatch = {
      moderation: String(f.get("moderation")),
      editWindowSeconds: num("editWindowSeconds"),
      maxBodyLength: num("maxBodyLength"),
      autoLockAfterDays: num("autoLockAfterDays"),
      reactionKinds: kinds(f.get("reactionKinds")),
      pageReactionKinds: f.get("pageReactions") === "on" ? kinds(f.get("pageReactionKinds")) : [],
      formatting: { markdown: f.get("formatting.markdown") === "on", images: f.get("formatting.images") === "on" },
      votes: String(f.get("votes")),
      allowedOrigins: String(f.get("allowedOrigins") ?? "")
        .split(/\s+/)
        .filter(Boolean),
      ...numberGroupsOf(f, GENERAL_GROUPS),
    };
    save(current, edited);
  };

  const overlap = s?.identity.secretOverlapHours;
  const rotate = () =>
    void gql(RotateIdentitySecretDocument).then(
      (d) => {
        setConfirming(false);
        setSecret(d.rotateIdentitySecret);
      },
      (e: unknown) => setRotateError(messageOf(e)),
    );

  return (
    <section aria-labelledby="settings-title">
      <SettingsViews current="general" />
      <h1 id="settings-title">Settings</h1>
      <ErrorMessage error={settings.error} />
      {s && (
        <form
          class="settings"
          key={JSON.stringify(s)}
          onSubmit={(e) => {
            e.preventDefault();
            submit(e.currentTarget, s);
          }}
        >
          <fieldset>
            <legend>Comments</legend>
            <div class="field">
              <label>
                {textOf("moderation").label}
                {/* `selected` on the option: a select has no defaultValue, so the server's value must be marked */}
                <select name="moderation" aria-describedby={describedBy(errors, "moderation", true)}>
                  <option value="post" selected={s.moderation === "post"}>
                    post (visible at once)
                  </option>
                  <option value="pre" selected={s.moderation === "pre"}>
                    pre (approve first)
                  </option>
                </select>
              </label>
              <FieldError errors={errors} path="moderation" />
              <Help path="moderation">{textOf("moderation").help}</Help>
            </div>
            <Field
              label={textOf("editWindowSeconds").label}
              path="editWindowSeconds"
              value={String(s.editWindowSeconds)}
              errors={errors}
              help={textOf("editWindowSeconds").help}
            />
            <Field
              label={textOf("maxBodyLength").label}
              path="maxBodyLength"
              value={String(s.maxBodyLength)}
              errors={errors}
              help={textOf("maxBodyLength").help}
            />
            <Field
              label={textOf("autoLockAfterDays").label}
              path="autoLockAfterDays"
              value={String(s.autoLockAfterDays)}
              errors={errors}
              help={textOf("autoLockAfterDays").help}
            />
            <Field
              label={textOf("reactionKinds").label}
              path="reactionKinds"
              value={s.reactionKinds.join(", ")}
              errors={errors}
              type="text"
              help={textOf("reactionKinds").help}
            />
          </fieldset>
          <fieldset>
            <legend>Formatting</legend>
            <div class="field">
              <label class="check">
                <input
                  type="checkbox"
                  name="formatting.markdown"
                  defaultChecked={s.formatting.markdown}
                  aria-describedby={describedBy(errors, "formatting.markdown", true)}
                />
                {textOf("formatting.markdown").label}
              </label>
              <FieldError errors={errors} path="formatting.markdown" />
              <Help path="formatting.markdown">{textOf("formatting.markdown").help}</Help>
            </div>
            <div class="field">
              <label class="check">
                <input
                  type="checkbox"
                  name="formatting.images"
                  defaultChecked={s.formatting.images}
                  aria-describedby={describedBy(errors, "formatting.images", true)}
                />
                {textOf("formatting.images").label}
              </label>
              <FieldError errors={errors} path="formatting.images" />
              <Help path="formatting.images">{textOf("formatting.images").help}</Help>
            </div>
          </fieldset>
          <fieldset>
            <legend>Votes and page reactions</legend>
            <div class="field">
              <label>
                {textOf("votes").label}
                <select name="votes" aria-describedby={describedBy(errors, "votes", true)} aria-invalid={errors.votes ? "true" : undefined}>
                  {VOTES.map((v) => (
                    <option key={v.value} value={v.value} selected={s.votes === v.value}>
                      {v.label}
                    </option>
                  ))}
                </select>
              </label>
              <FieldError errors={errors} path="votes" />
              <Help path="votes">{textOf("votes").help}</Help>
            </div>
            <PageReactions s={s} errors={errors} />
          </fieldset>
          <NumberGroups groups={GENERAL_GROUPS} s={s} errors={errors} />
          <fieldset>
            <legend>Browsers</legend>
            <div class="field">
              <label>
                {textOf("allowedOrigins").label}
                <textarea
                  name="allowedOrigins"
                  rows={3}
                  defaultValue={s.allowedOrigins.join("\n")}
                  aria-describedby={describedBy(errors, "allowedOrigins", true)}
                  aria-invalid={errors.allowedOrigins ? "true" : undefined}
                />
              </label>
              <FieldError errors={errors} path="allowedOrigins" />
              <Help path="allowedOrigins">{textOf("allowedOrigins").help}</Help>
            </div>
          </fieldset>
          {saveBar}
        </form>
      )}
      <h2>Identity secret</h2>
      <p>
        Your backend signs readers' identity assertions with it. After a rotation the new secret signs at once, and the old one keeps
        working for the overlap ({overlap ?? 24} hours, set under Identity providers), so your backend can switch over without signing
        anyone out.
      </p>
      <ErrorMessage error={rotateError} />
      {secret ? (
        <div class="secret" role="region" aria-label="The new identity secret">
          <p class="warning">Copy it now: it is shown only this once.</p>
          <p>
            <code class="raw">{secret.identitySecret}</code> <Copy value={secret.identitySecret} />
          </p>
          <p>
            {secret.previousSecretExpiresAt
              ? `The old secret keeps working until ${new Date(String(secret.previousSecretExpiresAt)).toLocaleString()}.`
              : "The old secret no longer works (the overlap is 0 hours)."}
          </p>
        </div>
      ) : confirming ? (
        <div class="confirm" role="group" aria-label="Rotate the identity secret?">
          <p>
            Rotate the identity secret? Assertions signed with the current one keep working for {overlap ?? 24} hours; update your backend
            before then.
          </p>
          <button type="button" onClick={rotate}>
            Rotate now
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" onClick={() => setConfirming(true)}>
          Rotate identity secret
        </button>
      )}
    </section>
  );
}

/** Page reactions: on (with their kinds) or off (no kinds: the thread shows none and the route answers 409). */
function PageReactions({ s, errors }: { s: AllSettingsFragment; errors: Record<string, string> }) {
  const [on, setOn] = useState(s.pageReactionKinds.length > 0);
  return (
    <>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="pageReactions" checked={on} onChange={(e) => setOn(e.currentTarget.checked)} />
          Page reactions
        </label>
        <span class="hint field-help">Reactions on the page itself, shown above the comments.</span>
      </div>
      {on && (
        <Field
          label={textOf("pageReactionKinds").label}
          path="pageReactionKinds"
          value={s.pageReactionKinds.length ? s.pageReactionKinds.join(", ") : "up, heart"}
          errors={errors}
          type="text"
          help={textOf("pageReactionKinds").help}
        />
      )}
    </>
  );
}
