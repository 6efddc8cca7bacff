// How long things are kept: the webhook delivery log, Idempotency-Keys and their answers, readers'
// inbox items.
import { z } from "zod";
import { group, setting } from "./define.js";

export const retentionSettings = {
  /** how long the webhook delivery log (attempts) is kept */
  retention: group(
    { name: "RetentionSettings", title: "Retention" },
    {
      deliveryLogDays: setting(z.number().int().min(1).max(3_650), {
        default: 30,
        description: "Days the webhook delivery log is kept (default 30).",
        label: "Delivery log kept (days)",
        help: "How long the log of webhook delivery attempts is kept.",
      }),
    },
  ),
  /** how long an Idempotency-Key and the answer it stands for are kept (contract section 11) */
  idempotency: group(
    { name: "IdempotencySettings", title: "Idempotency keys" },
    {
      ttlHours: setting(z.number().int().min(1).max(720), {
        default: 24,
        description: "Hours an Idempotency-Key and the answer it stands for are kept (default 24, 1–720).",
        label: "Idempotency keys kept (hours)",
        help: "How long a request's answer is kept for a retry with the same Idempotency-Key.",
      }),
    },
  ),
  /** how long a reader's inbox items are kept (contract section 19) */
  inbox: group(
    { name: "InboxSettings", title: "Readers' inboxes" },
    {
      retentionDays: setting(z.number().int().min(1).max(3_650), {
        default: 90,
        description: "Days a reader's inbox items are kept (default 90, 1–3650).",
        label: "Inbox items kept (days)",
        help: "How long replies and followed comments stay in a reader's inbox (1–3650).",
      }),
    },
  ),
};
