// The client's address, one answer for every route (contract section 31 "Behind a proxy"): the
// connection's peer, unless that peer is one of TRUST_PROXY's addresses or networks; then the
// right-most address of X-Forwarded-For that is not itself trusted (@fastify/proxy-addr, the library
// fastify's own `trustProxy` uses). Fastify is given the same trust function (src/http/fastify.ts),
// so its `request.ip` and `request.protocol` (X-Forwarded-Proto) and the routes answered before it
// (src/http/raw-routes.ts) agree. From any other peer X-Forwarded-* is ignored.
import type { IncomingMessage } from "node:http";
import proxyAddr from "@fastify/proxy-addr";

export interface TrustedProxies {
  /** fastify's `trustProxy`: false when no proxy is trusted, else the compiled trust function */
  readonly fastifyOption: false | ((address: string, hop: number) => boolean);
  /** the client's address of a request (what every per-address limit counts); undefined for a closed socket */
  addressOf(req: IncomingMessage): string | undefined;
}

/** TRUST_PROXY's addresses and CIDRs (config.ts checks each). */
export function trustedProxies(list: readonly string[]): TrustedProxies {
  if (list.length === 0) {
    return { fastifyOption: false, addressOf: (req) => req.socket.remoteAddress };
  }
  const trust = proxyAddr.compile([...list]);
  return {
    fastifyOption: trust,
    addressOf: (req) => (req.socket.remoteAddress === undefined ? undefined : proxyAddr(req, trust)),
  };
}
