// Settings › Delivery & limits (#/settings/delivery, owners): what the service does for the tenant's
// servers and pages rather than how comments work — webhook delivery (attempts, backoff, timeout,
// pause and disable thresholds) and how long its log is kept, stream replay and stream length and
// heartbeat, rate limits, and how long Idempotency-Keys are kept. The same form as General
// (settings-fields.tsx): the server's current values, only the fields changed are saved.
import { ErrorMessage } from "../ui";
import type { AllSettingsFragment } from "../gql/graphql";
import { SettingsViews } from "./settings-views";
import { NUMBER_GROUPS, NumberGroups, numberGroupsOf, useSettingsForm, type Groups } from "./settings-fields";

const ORDER: Groups[] = ["delivery", "retention", "replay", "stream", "rateLimits", "idempotency"];
const DELIVERY_GROUPS = ORDER.map((g) => NUMBER_GROUPS.find((x) => x.group === g)!);

export function DeliveryScreen() {
  const { settings, s, errors, save, saveBar } = useSettingsForm();
  const submit = (form: HTMLFormElement, current: AllSettingsFragment) =>
    save(current, numberGroupsOf(new FormData(form), DELIVERY_GROUPS));
  return (
    <section aria-labelledby="delivery-title">
      <SettingsViews current="delivery" />
      <h1 id="delivery-title">Delivery &amp; limits</h1>
      <p class="hint">
        Webhook delivery to your servers, the streams your pages hold open, rate limits and Idempotency-Keys. How comments work is under
        General.
      </p>
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
          <NumberGroups groups={DELIVERY_GROUPS} s={s} errors={errors} />
          {saveBar}
        </form>
      )}
    </section>
  );
}
