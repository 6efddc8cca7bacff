// Akismet learns from the moderators (contract section 21, docs/safety.md): approving a comment Akismet
// held (its reason `{"source":"akismet"}`) sends `submit-ham`; rejecting a published comment while the
// tenant has Akismet sends `submit-spam` (it was checked and passed, unless it was written before
// Akismet was set or while Akismet did not answer). The moderator's change queues one delivery row of
// kind `akismet` in its own transaction (eng_enqueue_akismet, prisma/sql/70-events.sql); the webhook
// worker claims it, asks this composer for the request (src/outbound/composers.ts), and sends
// and retries it as it does a webhook's, with the tenant's `delivery` settings. Composing reads the
// settings and the comment as they are now: Akismet turned off since, or the comment deleted or
// erased, sends nothing. The reader's IP address and user agent were never stored, so these calls go
// without them.
// Under moderation's engine/: it is what the moderators' decisions send (whichever tenant's job the
// worker claims, read through that tenant's store), over Akismet's client (src/modules/akismet/client.ts).
import type { TenantStore } from "../../../db/tenant-store.js";
import type { SecretBox } from "../../../lib/secret-box.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import { readCommentSubject } from "../../comments/engine/subject.js";
import { submitRequest } from "../../akismet/client.js";

export interface AkismetJobDeps {
  stores: (tenantId: string) => TenantStore;
  secretBox: SecretBox;
}

/** An Akismet job's row: what eng_enqueue_akismet stored. */
interface AkismetRow {
  call: "submit-ham" | "submit-spam";
  commentId: string;
}

const isAkismetRow = (v: unknown): v is AkismetRow => {
  const r = v as Partial<AkismetRow> | null;
  return (r?.call === "submit-ham" || r?.call === "submit-spam") && typeof r.commentId === "string";
};

export function createAkismetJobs(deps: AkismetJobDeps): MessageComposer {
  return {
    async compose(job): Promise<Composed> {
      if (!isAkismetRow(job.message)) return { drop: "not an Akismet job's row" };
      const { call, commentId } = job.message;
      const akismet = resolveSettings(job.tenantSettings).safety.akismet;
      if (!akismet) return { drop: "Akismet was turned off" };
      const c = await readCommentSubject(deps.stores(job.tenantId), commentId);
      if (!c || c.status === "deleted") return { drop: "the comment is gone" };
      return submitRequest(deps.secretBox, akismet, call, {
        userIp: null,
        userAgent: null,
        author: c.readerName,
        content: c.body,
        permalink: c.discussionUrl,
      });
    },
  };
}
