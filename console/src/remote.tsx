// Remote readers (contract section 24): a comment by `ap:<actor URL>` came from the fediverse, one by
// `wm:<site origin>` is a webmention. Their cards say so with a badge, and offer "Block domain", which
// adds the reader's domain to the settings' federation.blockedDomains (GraphQL updateSettings, owners:
// manage_settings): that domain's new remote comments are then refused (docs/fediverse.md).
import { useState } from "preact/hooks";
import { gql } from "./api";
import { BlockedDomainsDocument, BlockDomainDocument } from "./gql/graphql";
import { messageOf } from "./ui";

/** Where a reader's comments come from: the fediverse, a webmention, or here (null). */
export function remoteKind(readerId: string): "fediverse" | "webmention" | null {
  if (readerId.startsWith("ap:")) return "fediverse";
  if (readerId.startsWith("wm:")) return "webmention";
  return null;
}

/** The domain of a remote reader (the host of its actor URL or site origin), lower case; null for a local reader. */
export function remoteDomain(readerId: string): string | null {
  if (!remoteKind(readerId)) return null;
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
    <span class={`badge remote-badge remote-${kind}`} title={kind === "fediverse" ? "A reply from the fediverse" : "A webmention"}>
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
