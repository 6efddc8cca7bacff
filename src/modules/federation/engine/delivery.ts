// Outbound activities (contract section 24): each (activity, remote inbox) is one job of the outbound
// queue (webhook_deliveries, kind `activitypub`), made from a federated discussion's
// `activitypub_fanout` job (outbound.ts) or, for the inbox's own answers, queued here, each with the
// activity's Object Integrity Proof (FEP-8b32: Fedify's signObject, eddsa-jcs-2022, by the actor's
// Ed25519 key, the Multikey its actor document lists under assertionMethod); sent by the outbound
// worker (src/outbound/): its lease, retries with backoff (the tenant's `delivery` settings), the
// outbound client's SSRF guard and limits. When the worker claims a row, the composer below signs the
// stored activity with the tenant's actor's RSA key (Fedify's signRequest) and hands back the
// request, signed one of two ways: by RFC 9421 HTTP Message Signatures (with a Content-Digest) or by
// draft-cavage HTTP signatures (with a Digest, as Mastodon verifies). Which goes first is what the
// remote server (the inbox's origin) last accepted, RFC 9421 for one not seen before; when the first
// is answered 400 or 401 the worker sends the other at once, signed then (a double knock), and the
// spec that was accepted is remembered for that origin (in the federation's KvStore, where Fedify
// keeps its own, for 30 days, then tried afresh; each process reads it at most once a minute). Each
// remote server (the inbox's host, across tenants) has a breaker in federation_domains
// (src/outbound/server-breaker.ts): after DOMAIN_BREAKER_THRESHOLD consecutive failed attempts its
// jobs wait (deferred, no attempt counted) for a cooldown that doubles each time it opens again,
// from one minute up to an hour; one success closes it.
import { signObject, signRequest, type HttpMessageSignaturesSpec, type KvStore } from "@fedify/fedify";
import { Temporal } from "@js-temporal/polyfill";
import type { Sql } from "../../../db/sql.js";
import type { Composed, MessageComposer, SentOutcome } from "../../../outbound/composers.js";
import { enqueueMessages } from "../../../outbound/jobs.js";
import { createServerBreaker, SERVER_BREAKER_RULES } from "../../../outbound/server-breaker.js";
import type { KeyStore } from "./keys.js";
import type { ActivityJob, OutboundQueue } from "./context.js";

export const DOMAIN_BREAKER_THRESHOLD = SERVER_BREAKER_RULES.threshold;

/** Where the spec each origin accepted is kept (Fedify's own prefix for it, kvPrefixes.httpMessageSignaturesSpec). */
const SPEC_PREFIX = ["_fedify", "httpMessageSignaturesSpec"] as const;
/** How long an origin's spec is remembered before RFC 9421 is tried first again. */
const SPEC_TTL = Temporal.Duration.from({ days: 30 });
const FIRST_KNOCK: HttpMessageSignaturesSpec = "rfc9421";
/** How long a process keeps what the store said of an origin's spec, and for how many origins. */
const SPEC_MEMO_MS = 60_000;
const SPEC_MEMO_MAX = 10_000;
const otherSpec = (s: HttpMessageSignaturesSpec): HttpMessageSignaturesSpec =>
  s === "rfc9421" ? "draft-cavage-http-signatures-12" : "rfc9421";
const isSpec = (v: unknown): v is HttpMessageSignaturesSpec => v === "rfc9421" || v === "draft-cavage-http-signatures-12";

const isActivityJob = (v: unknown): v is ActivityJob => {
  const j = v as Partial<ActivityJob> | null;
  return typeof j?.inbox === "string" && typeof j.keyId === "string" && typeof j.activity === "object" && j.activity !== null;
};

export function createOutboundQueue(deps: { sql: Sql; nudge: () => void; now: () => Date }): OutboundQueue {
  const messages: OutboundQueue["messages"] = async (ctx, tenantId, activity, inboxes) => {
    const targets = [...new Set(inboxes)];
    if (targets.length === 0) return [];
    // the Object Integrity Proof (FEP-8b32, eddsa-jcs-2022) by the actor's Ed25519 key, once for every inbox
    const ed25519 = (await ctx.getActorKeyPairs(tenantId)).find((k) => k.privateKey.algorithm.name === "Ed25519");
    const proven = ed25519?.multikey.id
      ? await signObject(activity, ed25519.privateKey, ed25519.multikey.id, { contextLoader: ctx.contextLoader })
      : activity;
    const json = await proven.toJsonLd({ format: "compact", contextLoader: ctx.contextLoader });
    const keyId = `${ctx.getActorUri(tenantId).href}#main-key`;
    return targets.map((inbox) => ({ inbox, activity: json, keyId }));
  };
  return {
    messages,
    async send(ctx, tenantId, activity, inboxes) {
      const made = await messages(ctx, tenantId, activity, inboxes);
      if (made.length === 0) return 0;
      await enqueueMessages(
        deps.sql,
        "activitypub",
        made.map((message) => ({ tenantId, message })),
        deps.now(),
      );
      deps.nudge();
      return made.length;
    },
  };
}

/** The composer of `activitypub` jobs and the per-domain breaker (src/outbound/composers.ts). */
export function createActivityComposer(deps: { sql: Sql; keys: KeyStore; kv: KvStore }): MessageComposer {
  const specKey = (origin: string) => [...SPEC_PREFIX, origin] as const;
  const breaker = createServerBreaker(deps.sql, "federation_domains");
  // what the KvStore says of each origin, read at most once a SPEC_MEMO_MS in this process (a burst to
  // one server reads it once, not twice a delivery); another instance's learning reaches it within that
  const memo = new Map<string, { spec: HttpMessageSignaturesSpec | null; until: number }>();
  const rememberedSpec = async (origin: string, now: Date) => {
    const kept = memo.get(origin);
    if (kept && kept.until > now.getTime()) return kept.spec;
    const v = await deps.kv.get(specKey(origin));
    const spec = isSpec(v) ? v : null;
    keep(origin, spec, now);
    return spec;
  };
  const keep = (origin: string, spec: HttpMessageSignaturesSpec | null, now: Date) => {
    memo.delete(origin);
    if (memo.size >= SPEC_MEMO_MAX) memo.delete(memo.keys().next().value as string);
    memo.set(origin, { spec, until: now.getTime() + SPEC_MEMO_MS });
  };
  return {
    async compose(job, now): Promise<Composed> {
      if (!isActivityJob(job.message)) return { drop: "not an ActivityPub job's row" };
      const { inbox, activity, keyId } = job.message;
      const url = URL.parse(inbox);
      if (!url?.host) return { drop: "the inbox is not a URL" };
      const { until } = await breaker.state(url.host, now);
      if (until && until > now) return { defer: until };
      const keys = await deps.keys.keysOf(job.tenantId);
      const body = JSON.stringify(activity);
      const first = (await rememberedSpec(url.origin, now)) ?? FIRST_KNOCK;
      const signed = async (spec: HttpMessageSignaturesSpec) => {
        const unsigned = new Request(inbox, {
          method: "POST",
          headers: { "content-type": "application/activity+json", accept: "application/activity+json" },
          body,
        });
        const request = await signRequest(unsigned, keys.rsa.privateKey, new URL(keyId), { spec });
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => (headers[name] = value));
        return headers;
      };
      // the other spec's signature is made only when the first is refused (one RSA signature a delivery)
      return { url: inbox, body, headers: await signed(first), fallback: { headers: () => signed(otherSpec(first)) } };
    },
    async settled(outcome: SentOutcome, now: Date) {
      const url = URL.parse(outcome.url);
      if (!url?.host) return;
      const host = url.host;
      if (outcome.ok) {
        // the spec it accepted: the first knock's, or the other when its fallback was answered
        const remembered = await rememberedSpec(url.origin, now);
        const first = remembered ?? FIRST_KNOCK;
        const accepted = outcome.fallback ? otherSpec(first) : first;
        if (accepted !== remembered) {
          await deps.kv.set(specKey(url.origin), accepted, { ttl: SPEC_TTL });
          keep(url.origin, accepted, now);
        }
      }
      // a 4xx other than 408/429 is the receiver's answer about this activity, not its health
      const healthy =
        outcome.ok ||
        (outcome.statusCode !== null && outcome.statusCode >= 400 && outcome.statusCode < 500 && ![408, 429].includes(outcome.statusCode));
      await breaker.settle(host, healthy, now);
    },
  };
}
