// Bluesky (#/bluesky, owners; contract section 30, docs/bluesky.md): a discussion linked to a Bluesky
// post, its replies brought in as comments. Account: the `bluesky` settings in one form as the
// settings screens have them (settings-fields.tsx: only what changed is saved, each problem beside its
// field); the app password is write-only: the field is always empty, its help says when one is stored,
// typed it replaces it, a box removes it. Linked posts: the list, linking, unlinking and posting (bluesky-links.tsx).
// Moderation: how replies are moderated (remoteModeration) and the way to the queue.
import { useMemo, useRef } from "preact/hooks";
import type { AllSettingsFragment, SettingsPatch } from "../gql/graphql";
import { ErrorMessage } from "../ui";
import { FieldError } from "../components/fields";
import { Field, Help, describedBy, optionsOf, secretHelp, textOf, useSettingsForm } from "./settings-fields";
import { LinkedPosts, textIn } from "./bluesky-links";

/** The settings' defaults for the two servers: an empty field stands for them. */
const DEFAULT_SERVICE = "https://bsky.social";
const DEFAULT_APP_VIEW = "https://public.api.bsky.app";

export function BlueskyScreen() {
  const { settings, s, errors, save, saveBar } = useSettingsForm();
  // the form is drawn anew from each answer of the settings (a save's included): the password field is then empty again
  const drawn = useRef(0);
  const formKey = useMemo(() => ++drawn.current, [s]);

  const submit = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const appPassword = String(f.get("bluesky.appPassword") ?? "");
    // a password typed replaces the stored one; else the box removes it (the account can then no longer post)
    const removed = !appPassword && f.get("bluesky.appPasswordRemoved") === "on";
    const edited: SettingsPatch = {
      bluesky: {
        enabled: f.get("bluesky.enabled") === "on",
        handle: textIn(f, "bluesky.handle").replace(/^@/, "") || null,
        ...(appPassword ? { appPassword } : removed ? { appPassword: null } : {}),
        service: textIn(f, "bluesky.service") || DEFAULT_SERVICE,
        appView: textIn(f, "bluesky.appView") || DEFAULT_APP_VIEW,
        remoteModeration: String(f.get("bluesky.remoteModeration")),
        autoPost: f.get("bluesky.autoPost") === "on",
      },
    };
    // only what changed is saved (a value and null the same when none is set): the stored password stands
    // in the server's values as one, so that its removal (null) is a change
    const stored = current.bluesky.appPasswordSet ? { appPassword: "(stored)" } : {};
    save({ ...current, bluesky: { ...current.bluesky, ...stored } }, edited);
  };

  const b = s?.bluesky;
  return (
    <section class="bluesky" aria-labelledby="bluesky-title">
      <h1 id="bluesky-title">Bluesky</h1>
      <p class="hint">
        A discussion linked to a Bluesky post gets that post's replies as comments: posted from the site's account, or linked to a post that
        is already there. Replies are read every minute or so while a discussion is active, less often as it ages.
      </p>
      <ErrorMessage error={settings.error} />
      {b && (
        <dl class="summary facts" aria-label="The site on Bluesky">
          <dt>State</dt>
          <dd>{b.enabled ? "On: replies of linked posts are read" : "Off: nothing is read, linked or posted"}</dd>
          <dt>Account</dt>
          <dd>
            {b.handle
              ? `@${b.handle}${b.appPasswordSet ? "" : " (no app password yet: it cannot post)"}`
              : "None: posts that are already there can still be linked"}
          </dd>
        </dl>
      )}

      <section aria-labelledby="bluesky-account-title">
        <h2 id="bluesky-account-title">Account</h2>
        {s && b && (
          <form
            class="settings"
            key={formKey}
            onSubmit={(e) => {
              e.preventDefault();
              submit(e.currentTarget, s);
            }}
          >
            <fieldset>
              <legend>The site's account</legend>
              <div class="field">
                <label class="check">
                  <input
                    type="checkbox"
                    name="bluesky.enabled"
                    defaultChecked={b.enabled}
                    aria-describedby={describedBy(errors, "bluesky.enabled")}
                  />
                  {textOf("bluesky.enabled").label}
                </label>
                <FieldError errors={errors} path="bluesky.enabled" />
              </div>
              <Field
                label={textOf("bluesky.handle").label}
                path="bluesky.handle"
                value={b.handle ?? ""}
                errors={errors}
                help={textOf("bluesky.handle").help}
                type="text"
              />
              <div class="field">
                <label>
                  {textOf("bluesky.appPassword").label}
                  <input
                    name="bluesky.appPassword"
                    type="password"
                    autoComplete="new-password"
                    spellcheck={false}
                    placeholder={b.appPasswordSet ? "stored" : "xxxx-xxxx-xxxx-xxxx"}
                    aria-describedby={describedBy(errors, "bluesky.appPassword", true)}
                    aria-invalid={errors["bluesky.appPassword"] ? "true" : undefined}
                  />
                </label>
                <FieldError errors={errors} path="bluesky.appPassword" />
                <Help path="bluesky.appPassword">{secretHelp("bluesky.appPassword", b.appPasswordSet)}</Help>
                {b.appPasswordSet && (
                  <label class="check">
                    <input type="checkbox" name="bluesky.appPasswordRemoved" />
                    Remove the stored app password (the site's account can then no longer post)
                  </label>
                )}
              </div>
              <Field
                label={textOf("bluesky.service").label}
                path="bluesky.service"
                value={b.service}
                errors={errors}
                help={textOf("bluesky.service").help}
                type="url"
              />
            </fieldset>
            <fieldset>
              <legend>Replies and posts</legend>
              <div class="field">
                <label>
                  {textOf("bluesky.remoteModeration").label}
                  <select name="bluesky.remoteModeration" aria-describedby={describedBy(errors, "bluesky.remoteModeration")}>
                    {optionsOf("bluesky.remoteModeration").map(([value, o]) => (
                      <option key={value} value={value} selected={b.remoteModeration === value}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                </label>
                <FieldError errors={errors} path="bluesky.remoteModeration" />
              </div>
              <Field
                label={textOf("bluesky.appView").label}
                path="bluesky.appView"
                value={b.appView}
                errors={errors}
                help={textOf("bluesky.appView").help}
                type="url"
              />
              <div class="field">
                <label class="check">
                  <input
                    type="checkbox"
                    name="bluesky.autoPost"
                    defaultChecked={b.autoPost}
                    aria-describedby={describedBy(errors, "bluesky.autoPost", true)}
                    aria-invalid={errors["bluesky.autoPost"] ? "true" : undefined}
                  />
                  {textOf("bluesky.autoPost").label}
                </label>
                <FieldError errors={errors} path="bluesky.autoPost" />
                <Help path="bluesky.autoPost">{textOf("bluesky.autoPost").help}</Help>
              </div>
            </fieldset>
            {saveBar}
          </form>
        )}
      </section>

      <LinkedPosts enabled={b?.enabled} />

      <section aria-labelledby="bluesky-moderation-title">
        <h2 id="bluesky-moderation-title">Moderation</h2>
        {b && <p>{moderationText(b.remoteModeration)}</p>}
        <p>
          A reply deleted on Bluesky is deleted here. A reply rejected or deleted here stays so: nothing is written to Bluesky but the
          site's own posts. Each reply's author is a reader whose id starts with <code>at:</code>.
        </p>
        <p>
          <a href="#/moderation">Open the moderation queue (pending comments)</a>
        </p>
      </section>
    </section>
  );
}

/** How replies are moderated, per settings bluesky.remoteModeration. */
function moderationText(mode: string): string {
  const rules = "The site's safety rules (banned words, link limits, the moderation hook, Akismet, bans) apply to them as to any comment.";
  return mode === "post"
    ? `Replies from Bluesky are published at once, as local comments are. ${rules}`
    : `Each reply from Bluesky is held as pending until a moderator approves it: it waits in the moderation queue with the other pending comments. ${rules}`;
}

/** A refusal of linking, unlinking or posting the discussion `id`, in words. */
