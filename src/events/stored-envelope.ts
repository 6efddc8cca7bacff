// How the event log keeps an envelope (contract section 5): as text in `events.envelope`, the text the
// write built, never parsed by the database on the write path (a json column validates every insert:
// docs/scaling.md, "The envelope as text"). Rows written by releases before that column keep theirs
// as json in `payload` until the retention job drops their days; every read takes one of these.
import type { EventEnvelope } from "./types.js";

/** The envelope's text as a read selects it from `events`, or from the events row `alias` of a join (parsed once, by Node: envelopeOf). */
export const envelopeTextOf = (alias?: string): string => {
  const of = alias ? `${alias}.` : "";
  return `COALESCE(${of}envelope, ${of}payload::text)`;
};

/** The envelope's text as a read of `events` alone selects it. */
export const ENVELOPE_TEXT = envelopeTextOf();

/** The envelope as json, for a read that takes members out of it in SQL (`#>>`). */
export const ENVELOPE_JSON = "COALESCE(envelope::json, payload)";

/** A stored event's envelope: its text parsed, or the json `payload` (already parsed by the driver) of an older row. */
export function envelopeOf(row: { envelope: string | null; payload?: unknown }): EventEnvelope {
  return (row.envelope === null ? row.payload : JSON.parse(row.envelope)) as EventEnvelope;
}

/**
 * The members of an event's envelope a write knows before its id and seq, as JSON text without
 * braces: what eng_envelope_members makes (prisma/sql/70-events.sql), built by the request that
 * hands them to a post (eng_post_comment's p_event_members) so the database need not.
 */
export function envelopeMembers(type: string, tenantId: string, discussionId: string, at: Date): string {
  return JSON.stringify({ type, tenantId, discussionId, occurredAt: at.toISOString() }).slice(1, -1);
}
