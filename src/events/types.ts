export const STREAM_EVENT_TYPES = [
  "comment_created",
  "comment_edited",
  "comment_deleted",
  "comment_approved",
  "comment_rejected",
  "comment_pinned",
  "comment_unpinned",
  "reaction_toggled",
  "discussion_locked",
  "discussion_unlocked",
  "discussion_archived",
  "notification_reply",
] as const;

export type EventType = (typeof STREAM_EVENT_TYPES)[number];

/** Webhooks carry every stream event except the reader-private notification. */
export const WEBHOOK_EVENT_TYPES = STREAM_EVENT_TYPES.filter((t) => t !== "notification_reply");

/**
 * Who may see an event:
 * - "all": every stream of the discussion and webhooks;
 * - "moderators": pending/rejected content: streams with moderate_content, and webhooks;
 * - "reader": only streams bound to `readerId` (reply notifications, an author's own pending comment).
 */
export type Audience = "all" | "moderators" | "reader";

/** Contract section 5. */
export interface EventEnvelope {
  id: string;
  seq: number;
  type: EventType;
  tenantId: string;
  discussionId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

export interface StoredEvent {
  envelope: EventEnvelope;
  audience: Audience;
  readerId: string | null;
}
