// What Fedify's callbacks are handed (its context data): the app's services, the actors' keys and
// the outbound queue. One value for the process, built with the federation (federation.ts).
import type { AppServices } from "../../../context/request.js";
import type { KeyStore } from "./keys.js";
import type { OutboundQueue } from "./delivery.js";
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
