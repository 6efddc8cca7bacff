// The signed-in operator's own moderation digest (contract section 15): off, hourly or daily, an
// email of the comments waiting for review, sent only when some do (GraphQL myModerationDigest /
// updateMyModerationDigest). Shown in the moderation queue's toolbar; saved as soon as it changes.
import { useEffect, useState } from "preact/hooks";
import { gql } from "../api";
import { MyModerationDigestDocument, UpdateMyModerationDigestDocument, type DigestFrequency } from "../gql/graphql";
import { messageOf } from "../ui";

const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

export function DigestChoice() {
  const [frequency, setFrequency] = useState<DigestFrequency | null>(null);
  const [said, setSaid] = useState<string | null>(null);

  useEffect(() => {
    gql(MyModerationDigestDocument, {}).then(
      (d) => setFrequency(d.myModerationDigest.frequency),
      () => setFrequency(null),
    );
  }, []);

  if (frequency === null) return null;
  return (
    <>
      <label>
        Email me a digest
        <select
          value={frequency}
          onChange={(e) => {
            const next = e.currentTarget.value as DigestFrequency;
            setFrequency(next);
            gql(UpdateMyModerationDigestDocument, { frequency: next }).then(
              (d) => {
                const r = d.updateMyModerationDigest;
                setSaid(r.nextAt ? `Digest ${r.frequency}: the next at ${when(r.nextAt)}, if anything waits.` : "No digest emails.");
              },
              (err: unknown) => setSaid(`Not saved: ${messageOf(err)}`),
            );
          }}
        >
          <option value="off">Off</option>
          <option value="hourly">Hourly</option>
          <option value="daily">Daily</option>
        </select>
      </label>
      {said && (
        <span class="hint" role="status">
          {said}
        </span>
      )}
    </>
  );
}
