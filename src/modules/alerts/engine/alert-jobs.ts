// Chat alerts' jobs (contract section 21): the write that held or reported a comment queued one row of
// kind `alert` per matching alert of the settings, in its own transaction (eng_enqueue_alerts,
// prisma/sql/70-events.sql). The webhook worker claims them with its webhook jobs and asks this
// composer for the request (src/outbound/composers.ts); it then sends, retries and records it
// as it does a webhook's. Composing reads the alert's URL from the settings as they are now (an alert
// removed since sends nothing), the comment as it is now (one gone sends nothing), records the job's
// Approve and Reject links (links.ts: bound to the comment's revision the row kept, so they act only
// if nothing decided it since the alert was queued) and renders the chat's message (messages.ts).
import type { Config } from "../../../config.js";
import type { TenantStore } from "../../../db/tenant-store.js";
import type { SecretBox } from "../../../lib/secret-box.js";
import { ALERT_TRIGGERS, type AlertTrigger } from "../../../tenancy/settings/alerts.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import { alertUrl } from "../settings.js";
import { recordAlertLinks } from "./links.js";
import { describeReason, renderAlert } from "./messages.js";
import { readCommentSubject } from "../../comments/engine/subject.js";

export interface AlertJobs extends MessageComposer {
  /** Where links point: PUBLIC_URL, else `serverUrl`, the address the server listens on (set at start-up). */
  useServerUrl(serverUrl: string): void;
}

export interface AlertJobDeps {
  config: Pick<Config, "PUBLIC_URL" | "PORT">;
  stores: (tenantId: string) => TenantStore;
  secretBox: SecretBox;
  /** the secret the links' tokens are made with */
  linkSecret: string;
}

/** An alert job's row: what eng_enqueue_alerts stored. */
interface AlertRow {
  alertId: string;
  trigger: AlertTrigger;
  commentId: string;
  reason: unknown;
  /** the comment's revision when the alert was queued (absent in rows queued before it was kept) */
  revision?: number;
}

const isAlertRow = (v: unknown): v is AlertRow => {
  const r = v as Partial<AlertRow> | null;
  return typeof r?.alertId === "string" && typeof r.commentId === "string" && (ALERT_TRIGGERS as readonly unknown[]).includes(r.trigger);
};

/** The path a link opens, under PUBLIC_URL or the server's address. */
export const moderateLinkPath = (token: string): string => `/moderate/v1/${token}`;

export function createAlertJobs(deps: AlertJobDeps): AlertJobs {
  let base = deps.config.PUBLIC_URL ?? `http://127.0.0.1:${deps.config.PORT}`;
  return {
    useServerUrl(serverUrl) {
      base = deps.config.PUBLIC_URL ?? serverUrl;
    },
    async compose(job, now): Promise<Composed> {
      if (!isAlertRow(job.message)) return { drop: "not an alert's row" };
      const row = job.message;
      const alert = resolveSettings(job.tenantSettings).alerts.find((a) => a.id === row.alertId);
      if (!alert) return { drop: "the alert was removed from the settings" };
      const store = deps.stores(job.tenantId);
      const comment = await readCommentSubject(store, row.commentId);
      if (!comment || comment.status === "deleted") return { drop: "the comment is gone" };
      const tokens = await recordAlertLinks(
        store,
        deps.linkSecret,
        {
          tenantId: job.tenantId,
          jobId: job.id,
          alertId: alert.id,
          chat: alert.kind,
          commentId: comment.id,
          // a row queued before revisions were kept: the comment as the message shows it
          revision: typeof row.revision === "number" ? row.revision : comment.revision,
          queuedAt: job.createdAt.toISOString(),
        },
        now,
      );
      const link = (token: string) => `${base.replace(/\/+$/, "")}${moderateLinkPath(token)}`;
      const body = renderAlert(alert.kind, {
        site: comment.site,
        trigger: row.trigger,
        comment: { id: comment.id, body: comment.body },
        reader: { id: comment.readerId, name: comment.readerName },
        discussion: { id: comment.discussionId, title: comment.discussionTitle, url: comment.discussionUrl },
        reason: describeReason(row.reason),
        links: { approve: link(tokens.approve), reject: link(tokens.reject) },
        at: job.createdAt,
      });
      return { url: alertUrl(deps.secretBox, alert), body };
    },
  };
}
