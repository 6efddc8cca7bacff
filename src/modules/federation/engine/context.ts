// What Fedify's callbacks are handed (its context data): the app's services, the actors' keys and
// the outbound queue (its implementation: delivery.ts). One value for the process, built with the
// federation (federation.ts).
import type { AppServices } from "../../../context/request.js";
import type { KeyStore } from "./keys.js";
import type { Context } from "@fedify/fedify";
import type { Activity } from "@fedify/vocab";
import type { KeyLimiter } from "../../../auth/sign-in-throttle.js";

export interface FederationData {
  app: AppServices;
  keys: KeyStore;
  outbound: OutboundQueue;
  /** inbound activities whose signature verified, per remote domain and minute (INBOX_PER_DOMAIN_PER_MINUTE) */
  inboxLimiter: KeyLimiter;
  /** inbound activities without a valid signature, per client address and minute (INBOX_FORGED_PER_ADDRESS_PER_MINUTE) */
  forgedLimiter: KeyLimiter;
}

/** An `activitypub` job's message: where it goes, the activity (compacted JSON-LD, with its proof) and the key that signs it. */
export interface ActivityJob {
  inbox: string;
  activity: unknown;
  keyId: string;
}

export interface OutboundQueue {
  /** The deliveries of `activity` (by the tenant's actor) to each inbox, once per distinct inbox: `activitypub` jobs' messages. */
  messages(ctx: Context<FederationData>, tenantId: string, activity: Activity, inboxes: Iterable<string>): Promise<ActivityJob[]>;
  /** Queues `activity` to each inbox, once per distinct inbox (an answer of the inbox's: an Accept); the worker is woken. */
  send(ctx: Context<FederationData>, tenantId: string, activity: Activity, inboxes: Iterable<string>): Promise<number>;
}
