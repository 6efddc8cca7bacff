// One event as streams deliver it, built from a committed event or from a bus message; the JSON
// and the SSE frame are built once and shared by every stream.
import type { BusMessage } from "../events/bus.js";
import { STREAM_EVENT_TYPES, type Audience, type EventEnvelope, type StoredEvent } from "../events/types.js";
import { formatEvent } from "./sse-writer.js";

const AUDIENCES: ReadonlySet<string> = new Set<Audience>(["all", "moderators", "reader"]);
const TYPES: ReadonlySet<string> = new Set(STREAM_EVENT_TYPES);
const OF_STORED = new WeakMap<StoredEvent, LiveEvent>();

/** One event as streams deliver it; the JSON and the SSE frame are built once and shared. */
export class LiveEvent {
  private jsonText: string | undefined;
  private frame: string | undefined;
  private frameBytes: Buffer | undefined;

  constructor(
    readonly envelope: EventEnvelope,
    readonly audience: Audience,
    readonly readerId: string | null,
  ) {}

  get seq(): number {
    return this.envelope.seq;
  }

  get type(): string {
    return this.envelope.type;
  }

  /** The envelope of contract section 5, members in the contract's order. */
  get json(): string {
    if (this.jsonText === undefined) {
      const e = this.envelope;
      this.jsonText = JSON.stringify({
        id: e.id,
        seq: e.seq,
        type: e.type,
        tenantId: e.tenantId,
        discussionId: e.discussionId,
        occurredAt: e.occurredAt,
        data: e.data,
      });
    }
    return this.jsonText;
  }

  /** `id: <seq>` / `event: <type>` / `data: <envelope>`. */
  get sseFrame(): string {
    this.frame ??= formatEvent({ id: this.seq, event: this.type, data: this.json });
    return this.frame;
  }

  /** The frame's UTF-8 bytes, encoded once and written as is to every stream. */
  get sseBytes(): Buffer {
    this.frameBytes ??= Buffer.from(this.sseFrame, "utf8");
    return this.frameBytes;
  }

  /** One LiveEvent per stored event: replays shared by many clients encode each event once. */
  static fromStored(e: StoredEvent): LiveEvent {
    let ev = OF_STORED.get(e);
    if (!ev) OF_STORED.set(e, (ev = new LiveEvent(e.envelope, e.audience, e.readerId)));
    return ev;
  }

  /** The event a bus message carries, or null when it must be read from the log. */
  static fromBus(msg: BusMessage): LiveEvent | null {
    if (msg.audience === undefined || !AUDIENCES.has(msg.audience) || msg.readerId === undefined) return null;
    const env = msg.envelope;
    if (!isEnvelope(env) || env.seq !== msg.seq || env.tenantId !== msg.tenantId || env.discussionId !== msg.discussionId) {
      return null;
    }
    return new LiveEvent(env, msg.audience as Audience, msg.readerId);
  }
}

function isEnvelope(v: unknown): v is EventEnvelope {
  if (typeof v !== "object" || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.id === "string" &&
    typeof e.seq === "number" &&
    typeof e.type === "string" &&
    TYPES.has(e.type) &&
    typeof e.tenantId === "string" &&
    typeof e.discussionId === "string" &&
    typeof e.occurredAt === "string" &&
    typeof e.data === "object" &&
    e.data !== null
  );
}
