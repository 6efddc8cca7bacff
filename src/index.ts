// The package's public entry: what a webhook receiver needs (API.md §0 "Signature").
// See docs/webhooks.md for an example receiver.
export {
  verifyWebhook,
  parseSignatureHeader,
  computeV1,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
} from "./outbound/signature.js";
export type { HeadersLike, PlainHeaders, VerifyFailureReason, VerifyOptions, VerifyResult, WebhookSecret } from "./outbound/signature.js";
