// Fediverse (#/fediverse, owners; contract section 28): the site as an account people on Mastodon and
// other fediverse servers follow. Its address (@handle@domain) and followers (GraphQL
// federationStatus), the settings that make it (federation.*: on or off, handle, the site's own
// domain, the profile's site address, icon and text, how remote replies are moderated, the blocked
// domains) in one form as the settings screens have them (settings-fields.tsx: only what changed is
// saved), and the announcement of every discussion with a url not yet announced (announceDiscussions),
// followed until it ends.
import { useEffect, useRef, useState } from "preact/hooks";
import { gql } from "../api";
import {
  AnnounceDiscussionsDocument,
  FederationAnnouncementDocument,
  FederationStatusDocument,
  type AllSettingsFragment,
  type AnnouncementFragment,
  type Moderation,
  type SettingsPatch,
} from "../gql/graphql";
import { ErrorMessage, Notice, useAction, useLoad } from "../ui";
import { FieldError } from "../components/fields";
import { Field, Help, describedBy, optionsOf, textOf, useSettingsForm } from "./settings-fields";

/** how often a running announcement is asked for its state */
const POLL_MS = 1_000;

/** A text setting from the form: trimmed, empty is null (the setting's default). */
const textOrNull = (f: FormData, name: string): string | null => String(f.get(name) ?? "").trim() || null;

export function FediverseScreen() {
  const { settings, s, errors, save, saveBar } = useSettingsForm();
  const status = useLoad(() => gql(FederationStatusDocument));
  // the address and the state follow a save (the first settings read is the one the status was read with)
  const shownFederation = useRef<unknown>(undefined);
  useEffect(() => {
    if (!s) return;
    if (shownFederation.current !== undefined && shownFederation.current !== s.federation) status.reload();
    shownFederation.current = s.federation;
  }, [s]);

  const submit = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const edited: SettingsPatch = {
      federation: {
        enabled: f.get("federation.enabled") === "on",
        handle: textOrNull(f, "federation.handle"),
        domain: textOrNull(f, "federation.domain"),
        url: textOrNull(f, "federation.url"),
        icon: textOrNull(f, "federation.icon"),
        summary: textOrNull(f, "federation.summary"),
        remoteModeration: String(f.get("federation.remoteModeration")) as Moderation,
        blockedDomains: String(f.get("federation.blockedDomains") ?? "")
          .split(/\s+/)
          .filter(Boolean),
      },
    };
    save(current, edited);
  };

  const st = status.data?.federationStatus;
  const fed = s?.federation;
  return (
    <section aria-labelledby="fediverse-title">
      <h1 id="fediverse-title">Fediverse</h1>
      <p class="hint">
        Your site as an account people on Mastodon and other fediverse servers can follow: each new discussion with a page address is posted
        to its followers, and their replies come back as comments.
      </p>
      <ErrorMessage error={settings.error ?? status.error} />
      {st && fed && (
        <dl class="summary facts" aria-label="The site on the fediverse">
          <dt>Address</dt>
          <dd>{fed.handle ? (st.address ?? `@${fed.handle}@${location.host}`) : "None yet: choose a handle below"}</dd>
          <dt>Followers</dt>
          <dd>{st.followers.toLocaleString("en")}</dd>
          <dt>State</dt>
          <dd>{!st.served ? "Not served: this service has no public address (PUBLIC_URL)" : st.enabled ? "Federating" : "Off"}</dd>
        </dl>
      )}
      {s && fed && (
        <form
          class="settings"
          key={JSON.stringify(fed)}
          onSubmit={(e) => {
            e.preventDefault();
            submit(e.currentTarget, s);
          }}
        >
          <fieldset>
            <legend>The account</legend>
            <div class="field">
              <label class="check">
                <input
                  type="checkbox"
                  name="federation.enabled"
                  defaultChecked={fed.enabled}
                  aria-describedby={describedBy(errors, "federation.enabled")}
                />
                {textOf("federation.enabled").label}
              </label>
              <FieldError errors={errors} path="federation.enabled" />
            </div>
            <Text path="federation.handle" value={fed.handle} errors={errors} />
            <Text path="federation.domain" value={fed.domain} errors={errors} />
            <Text path="federation.url" value={fed.url} errors={errors} type="url" />
            <Text path="federation.icon" value={fed.icon} errors={errors} type="url" />
            <div class="field">
              <label>
                {textOf("federation.summary").label}
                <textarea
                  name="federation.summary"
                  rows={3}
                  defaultValue={fed.summary ?? ""}
                  aria-describedby={describedBy(errors, "federation.summary", true)}
                  aria-invalid={errors["federation.summary"] ? "true" : undefined}
                />
              </label>
              <FieldError errors={errors} path="federation.summary" />
              <Help path="federation.summary">{textOf("federation.summary").help}</Help>
            </div>
          </fieldset>
          <fieldset>
            <legend>Replies from the fediverse</legend>
            <div class="field">
              <label>
                {textOf("federation.remoteModeration").label}
                <select name="federation.remoteModeration" aria-describedby={describedBy(errors, "federation.remoteModeration", true)}>
                  {optionsOf("federation.remoteModeration").map(([value, o]) => (
                    <option key={value} value={value} selected={fed.remoteModeration === value}>
                      {o.label}
                    </option>
                  ))}
                </select>
              </label>
              <FieldError errors={errors} path="federation.remoteModeration" />
              <Help path="federation.remoteModeration">{textOf("federation.remoteModeration").help}</Help>
            </div>
            <div class="field">
              <label>
                {textOf("federation.blockedDomains").label}
                <textarea
                  name="federation.blockedDomains"
                  rows={4}
                  defaultValue={fed.blockedDomains.join("\n")}
                  aria-describedby={describedBy(errors, "federation.blockedDomains", true)}
                  aria-invalid={errors["federation.blockedDomains"] ? "true" : undefined}
                />
              </label>
              <FieldError errors={errors} path="federation.blockedDomains" />
              <Help path="federation.blockedDomains">{textOf("federation.blockedDomains").help}</Help>
            </div>
          </fieldset>
          {saveBar}
        </form>
      )}
      <Announce />
    </section>
  );
}

/** A text setting's field: its label and help as the setting describes them, empty for null. */
function Text({
  path,
  value,
  errors,
  type = "text",
}: {
  path: "federation.handle" | "federation.domain" | "federation.url" | "federation.icon";
  value: string | null;
  errors: Record<string, string>;
  type?: string;
}) {
  const text = textOf(path);
  return <Field label={text.label} path={path} value={value ?? ""} errors={errors} help={text.help} type={type} />;
}

/** What an announcement says of itself. */
function announcementText(a: AnnouncementFragment): string {
  if (a.state === "running") return "Announcing discussions…";
  if (a.state === "failed") return `The announcement failed: ${a.failure ?? "no reason given"}.`;
  const n = (k: number) => (k === 1 ? "1 discussion" : `${k.toLocaleString("en")} discussions`);
  return `Announced ${n(a.announced)}; ${n(a.alreadyAnnounced)} had been announced before.`;
}

/** The announcement of every discussion not yet announced: asked for, then followed until it ends. */
function Announce() {
  const action = useAction();
  const [job, setJob] = useState<AnnouncementFragment | null>(null);
  useEffect(() => {
    if (job?.state !== "running") return;
    const timer = setTimeout(
      () => void action.run(async () => setJob((await gql(FederationAnnouncementDocument, { id: job.id })).federationAnnouncement)),
      POLL_MS,
    );
    return () => clearTimeout(timer);
  }, [job]);
  return (
    <section aria-labelledby="announce-title">
      <h2 id="announce-title">Announce discussions</h2>
      <p class="hint">
        New discussions with a page address are posted to your followers as they are made. This posts every earlier one that has not been,
        in the background: followers see them as new posts.
      </p>
      <button
        type="button"
        disabled={action.busy || job?.state === "running"}
        onClick={() => void action.run(async () => setJob((await gql(AnnounceDiscussionsDocument)).announceDiscussions))}
      >
        Announce discussions
      </button>
      <ErrorMessage error={action.error} />
      {job && <Notice>{announcementText(job)}</Notice>}
    </section>
  );
}
