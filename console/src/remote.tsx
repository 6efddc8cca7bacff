// Remote readers (contract sections 24 and 30): a comment by `ap:<actor URL>` came from the fediverse,
// one by `wm:<site origin>` is a webmention, one by `at:<did>` a reply on Bluesky. Their cards say so
// with a badge; the fediverse's and webmentions' offer "Block domain", which adds the reader's domain
// to the settings' federation.blockedDomains (GraphQL updateSettings, owners: manage_settings): that
// domain's new remote comments are then refused (docs/fediverse.md). A Bluesky reader has no domain.
import { useState } from "preact/hooks";
import { gql } from "./api";
import { BlockedDomainsDocument, BlockDomainDocument } from "./gql/graphql";
import { messageOf } from "./ui";

/** Where a reader's comments come from: the fediverse, a webmention, Bluesky, or here (null). */
export function remoteKind(readerId: string): "fediverse" | "webmention" | "bluesky" | null {
  if (readerId.startsWith("ap:")) return "fediverse";
  if (readerId.startsWith("wm:")) return "webmention";
  if (readerId.startsWith("at:")) return "bluesky";
  return null;
}

const BADGE_TITLES = { fediverse: "A reply from the fediverse", webmention: "A webmention", bluesky: "A reply on Bluesky" } as const;

/** The domain of a fediverse or webmention reader (the host of its actor URL or site origin), lower case; null for others. */
export function remoteDomain(readerId: string): string | null {
  const kind = remoteKind(readerId);
  if (kind !== "fediverse" && kind !== "webmention") return null;
  try {
    return new URL(readerId.slice(3)).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}

/** The badge by a remote reader's name. */
export function RemoteBadge({ readerId }: { readerId: string }) {
  const kind = remoteKind(readerId);
  if (!kind) return null;
  return (
    <span class={`badge remote-badge remote-${kind}`} title={BADGE_TITLES[kind]}>
      {kind}
    </span>
  );
}

/** Adds the reader's domain to federation.blockedDomains (the list read first: a PATCH replaces it whole). */
export async function blockDomain(domain: string): Promise<void> {
  const current = (await gql(BlockedDomainsDocument)).settings.federation.blockedDomains;
  if (current.includes(domain)) return;
  await gql(BlockDomainDocument, { input: { federation: { blockedDomains: [...current, domain] } } });
}

/**
 * "Block domain" for a remote reader's comment, with what it did beside it. Blocking rejects the
 * domain's comments here (the server does, src/modules/moderation/blocked-domains.ts), so the screen
 * showing the card reads its comments again: `onBlocked` is handed what to tell (the card may leave).
 */
export function BlockDomainAction({ readerId, onBlocked }: { readerId: string; onBlocked?: (told: string) => void }) {
  const domain = remoteDomain(readerId);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  if (!domain) return null;
  const run = () => {
    setBusy(true);
    blockDomain(domain)
      .then(
        () => {
          const text = `Blocked ${domain}: its comments here are rejected and new ones refused.`;
          setOutcome({ ok: true, text });
          onBlocked?.(text);
        },
        (e: unknown) => setOutcome({ ok: false, text: `Not blocked: ${messageOf(e)}` }),
      )
      .finally(() => setBusy(false));
  };
  return (
    <>
      <button type="button" class="btn-plain" disabled={busy} title={`Block ${domain}`} onClick={run}>
        Block domain
      </button>
      {outcome && (
        <span role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "notice" : "error"}>
          {outcome.text}
        </span>
      )}
    </>
  );
}
