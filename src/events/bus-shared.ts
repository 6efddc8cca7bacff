/** Types and helpers shared by the bus implementations; import them from "./bus.js". */
export interface BusMessage {
  tenantId: string;
  discussionId: string;
  /** Per-discussion sequence number of the event (section 4 "Stream"). */
  seq: number;
  eventId: string;
  /**
   * The full event envelope (section 5), as JSON-compatible data, so the common case needs no
   * database read. Absent when the publisher chose not to include it (e.g. very large events):
   * read the event row by `eventId` then. Travels as JSON, also on the in-memory bus.
   */
  envelope?: unknown;
  /** Who may see the event (src/events/types.ts `Audience`); sent with the envelope. */
  audience?: string;
  /** The reader a "reader"-audience event is for; sent with the envelope. */
  readerId?: string | null;
}

export type BusListener = (msg: BusMessage) => void;

/**
 * A poke on a reader's channel (their own stream, `GET /api/v1/stream/me`): only "look again", never
 * the data. `unreadCount` present: the reader marked items read and this is their unread count after
 * it; absent: new inbox items committed for them. Streams read the items from the database by seq.
 */
export interface ReaderPoke {
  tenantId: string;
  readerId: string;
  unreadCount?: number;
}

export type ReaderPokeListener = (poke: ReaderPoke) => void;

export interface EventBus {
  /** Notify every subscriber of `msg.tenantId` + `msg.discussionId`, on every instance. */
  publish(msg: BusMessage): Promise<void>;
  /**
   * Resolves once the subscription is live (on Redis: after SUBSCRIBE was acknowledged), so a
   * message published after it resolves reaches `listener`. Resolves to the unsubscribe
   * function (idempotent). Subscribing the same function twice registers it twice.
   */
  subscribe(tenantId: string, discussionId: string, listener: BusListener): Promise<() => Promise<void>>;
  /** Pokes every subscriber of the reader's channel, on every instance (best effort, like `publish`). */
  pokeReader(poke: ReaderPoke): Promise<void>;
  /** As `subscribe`, for a reader's channel (tenant + reader id). */
  subscribeReader(tenantId: string, readerId: string, listener: ReaderPokeListener): Promise<() => Promise<void>>;
  /**
   * Fired after the underlying subscriber connection was lost and re-established, once the
   * subscriptions are live again: messages published meanwhile may be lost, so listeners
   * catch up from the event log. Never fired by the in-process bus. Returns a remover.
   */
  onReconnect(listener: () => void): () => void;
  /** Stops delivery and releases connections; later publish/subscribe calls reject. */
  close(): Promise<void>;
}

export class BusClosedError extends Error {
  constructor() {
    super("event bus is closed");
    this.name = "BusClosedError";
  }
}

/** Parses and checks a message that came over the wire; null when it is not a BusMessage. */
export function parseBusMessage(raw: string): BusMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (
    typeof v.tenantId !== "string" ||
    typeof v.discussionId !== "string" ||
    typeof v.seq !== "number" ||
    !Number.isFinite(v.seq) ||
    typeof v.eventId !== "string"
  ) {
    return null;
  }
  const msg: BusMessage = { tenantId: v.tenantId, discussionId: v.discussionId, seq: v.seq, eventId: v.eventId };
  if (v.envelope !== undefined) msg.envelope = v.envelope;
  if (typeof v.audience === "string") msg.audience = v.audience;
  if (typeof v.readerId === "string" || v.readerId === null) msg.readerId = v.readerId;
  return msg;
}

/**
 * The largest message that travels with its envelope: a larger one goes without it (and its
 * audience), and listeners read the event from the log by seq.
 */
export const MAX_INLINE_BYTES = 256 * 1024;

/**
 * Serializes a message for the wire, without its envelope when it would be over MAX_INLINE_BYTES;
 * throws a TypeError on an invalid one (a programming error).
 */
export function serializeBusMessage(msg: BusMessage): string {
  if (typeof msg.tenantId !== "string" || msg.tenantId === "") throw new TypeError("BusMessage.tenantId is required");
  if (typeof msg.discussionId !== "string" || msg.discussionId === "") {
    throw new TypeError("BusMessage.discussionId is required");
  }
  if (typeof msg.seq !== "number" || !Number.isFinite(msg.seq)) throw new TypeError("BusMessage.seq must be a number");
  if (typeof msg.eventId !== "string") throw new TypeError("BusMessage.eventId must be a string");
  const wire: BusMessage = { tenantId: msg.tenantId, discussionId: msg.discussionId, seq: msg.seq, eventId: msg.eventId };
  if (msg.envelope !== undefined) wire.envelope = msg.envelope;
  if (msg.audience !== undefined) wire.audience = msg.audience;
  if (msg.readerId !== undefined) wire.readerId = msg.readerId;
  const json = JSON.stringify(wire);
  // (a UTF-16 unit is at most 3 bytes of UTF-8: a short message is not counted)
  if (wire.envelope === undefined || json.length * 3 <= MAX_INLINE_BYTES || Buffer.byteLength(json) <= MAX_INLINE_BYTES) return json;
  return JSON.stringify({ tenantId: msg.tenantId, discussionId: msg.discussionId, seq: msg.seq, eventId: msg.eventId });
}

/** Parses and checks a reader poke that came over the wire; null when it is not one. */
export function parseReaderPoke(raw: string): ReaderPoke | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const p = v as Record<string, unknown>;
  if (typeof p.tenantId !== "string" || typeof p.readerId !== "string") return null;
  const poke: ReaderPoke = { tenantId: p.tenantId, readerId: p.readerId };
  if (typeof p.unreadCount === "number" && Number.isInteger(p.unreadCount) && p.unreadCount >= 0) poke.unreadCount = p.unreadCount;
  return poke;
}

export function serializeReaderPoke(poke: ReaderPoke): string {
  if (typeof poke.tenantId !== "string" || poke.tenantId === "") throw new TypeError("ReaderPoke.tenantId is required");
  if (typeof poke.readerId !== "string" || poke.readerId === "") throw new TypeError("ReaderPoke.readerId is required");
  const wire: ReaderPoke = { tenantId: poke.tenantId, readerId: poke.readerId };
  if (poke.unreadCount !== undefined) wire.unreadCount = poke.unreadCount;
  return JSON.stringify(wire);
}

/** Calls each listener; one that throws is reported and does not stop the others. */
export function dispatchSafely<M>(listeners: Iterable<(msg: M) => void>, msg: M, onError: (err: Error) => void): void {
  for (const listener of listeners) {
    try {
      listener(msg);
    } catch (err) {
      try {
        onError(toError(err));
      } catch {
        // an error reporter that throws must not break delivery either
      }
    }
  }
}

export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
