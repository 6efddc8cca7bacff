// How the federation fetches remote documents (actors, their keys, objects): through the webhooks'
// outbound client (src/outbound/http-client.ts), so every fetch passes the one SSRF guard
// (public addresses only, https; plain http to loopback only under ALLOW_HTTP_WEBHOOKS, the
// development and test flag), answers are bounded (the client's 64 KiB) and each fetch has a time
// limit. Fedify's own loader (global fetch, its own address check) is not used for anything remote:
// the JSON-LD contexts Fedify ships (ActivityStreams, security, Mastodon's, …) are answered by it from memory,
// with its network access never reached for those URLs. Fetched documents are cached in Fedify's
// KvStore (kv-store.ts) by its kvCache (5 minutes).
import {
  getDocumentLoader,
  kvCache,
  FetchError,
  preloadedContexts,
  type DocumentLoader,
  type KvStore,
  type RemoteDocument,
} from "@fedify/fedify";
import { guardedFetch, type WebhookHttpClient } from "../../../outbound/http-client.js";

/** The contexts Fedify preloads (its `preloadedContexts`): answered from memory, never fetched. */
const PRELOADED = new Set(Object.keys(preloadedContexts));

const ACCEPT = "application/activity+json, application/ld+json";
const MAX_REDIRECTS = 3;

export interface LoaderDeps {
  http: WebhookHttpClient;
  kv: KvStore;
  /** one fetch's time limit */
  timeoutMs: number;
  userAgent: string;
}

const isJsonLd = (type: string | null) => type === null || /^application\/(activity\+json|ld\+json|json)(\s*;|$)/i.test(type.trim());

/** A loader over the guarded client, then Fedify's cache around it. */
export function createDocumentLoader(deps: LoaderDeps): DocumentLoader {
  // preloaded contexts only: Fedify answers them without the network (skipPreloadedContexts false)
  const preloaded = getDocumentLoader();
  const fetchGuarded = guardedFetch(deps.http, deps.timeoutMs);
  const load = async (url: string, redirects = 0): Promise<RemoteDocument> => {
    if (PRELOADED.has(url)) return preloaded(url);
    let res: Response;
    try {
      res = await fetchGuarded(url, { headers: new Headers({ accept: ACCEPT, "user-agent": deps.userAgent }) });
    } catch (err) {
      throw new FetchError(url, err instanceof Error ? err.message : String(err));
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      if (redirects >= MAX_REDIRECTS) throw new FetchError(url, "too many redirects");
      return load(new URL(location, url).href, redirects + 1);
    }
    if (!res.ok) throw new FetchError(url, `HTTP ${res.status}`);
    if (!isJsonLd(res.headers.get("content-type"))) throw new FetchError(url, "not an ActivityPub document");
    let document: unknown;
    try {
      document = await res.json();
    } catch {
      throw new FetchError(url, "not JSON");
    }
    return { contextUrl: null, document, documentUrl: url };
  };
  return kvCache({ loader: (url) => load(url), kv: deps.kv, prefix: ["_fedify", "remoteDocument"] });
}
