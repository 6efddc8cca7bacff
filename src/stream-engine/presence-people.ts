// Who a stream counts as, for presence (src/stream-engine/presence.ts; docs/streams.md "Presence"):
// presence counts people, not connections. A stream bound to a reader (a ticket minted with an
// identity, or a key with X-Service-Identity) is that reader, counted once however many streams they
// have open on however many instances. A guest of the hosted sign-in is not: anyone gets a guest
// session for a name and a proof of work, so twenty of them from one address would read "20
// reading"; a guest's stream counts as a reader-less one, by its client's address (with
// `perAddress` 0, by the guest: once each). Any other stream is its client's address (src/lib/client-address.ts:
// an IPv6 address by its /64), whose streams count one each up to `perAddress`: several people behind
// one NAT address still count, one client opening fifty streams counts `perAddress`. With
// `perAddress` 0 every such stream is a person of its own (no grouping, as behind a proxy that hides
// the clients' addresses).
//
// Readers and addresses are named by a keyed hash (HMAC-SHA256 under a secret all instances share,
// with the tenant and discussion in the input), never as they are: no address or reader id is
// written to Redis or kept by presence.
import { createHmac } from "node:crypto";
import { addressGroup } from "../lib/client-address.js";
import { isGuestReader } from "../auth/reader-sessions.js";

/** Who opened a stream, as presence needs it. */
export interface PresenceClient {
  /** the reader the stream is bound to (a ticket minted with an identity, or X-Service-Identity) */
  readerId: string | null;
  /** the client's address (the connection's peer, or the client a trusted proxy names); null when not known */
  address: string | null;
}

/** A person of one discussion on this instance: the streams counted as one reader, up to `cap` of them. */
export interface Person {
  /** `r:<hash>` (a reader), `a:<hash>` (an address) or `s:<instance>.<n>` (a stream that is a person of its own) */
  tag: string;
  /** how many of its streams count at most */
  cap: number;
  /** its streams open on this instance */
  streams: number;
}

export interface PeopleOptions {
  /** the key readers and addresses are hashed with; the same on every instance */
  secret: Buffer;
  /** streams of one address that count, at most; 0: each counts (no grouping by address) */
  perAddress: number;
}

/** The person a new stream of the discussion (`discussionKey`) belongs to; `own` names it when it is a person of its own. */
export function personOf(o: PeopleOptions, discussionKey: string, client: PresenceClient, own: string): Omit<Person, "streams"> {
  const hashed = (kind: string, value: string) =>
    `${kind}:${createHmac("sha256", o.secret).update(`${discussionKey}\n${kind}\n${value}`).digest("base64url").slice(0, 22)}`;
  const guest = client.readerId !== null && isGuestReader(client.readerId);
  if (client.readerId !== null && (!guest || o.perAddress === 0)) return { tag: hashed("r", client.readerId), cap: 1 };
  if (o.perAddress === 0) return { tag: `s:${own}`, cap: 1 };
  return { tag: hashed("a", client.address === null ? "unknown" : addressGroup(client.address)), cap: o.perAddress };
}

/** The readers this instance's persons of a discussion make on their own (no Redis, or Redis failed). */
export function localCount(persons: Iterable<Person>): number {
  let n = 0;
  for (const p of persons) n += Math.min(p.cap, p.streams);
  return n;
}
