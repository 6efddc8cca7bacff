// Routes answered on node:http's request and response, before fastify's pipeline. One route uses
// this: the SSE stream (src/modules/streams/sse-route.ts), which a reconnect storm after a deploy
// opens thousands of times a second and which never needs fastify's body parsing, hooks or reply
// (it writes its own head on the socket). Such a route does what fastify's pipeline would have done
// for it with the same shared pieces: the request id (observability.ts), CORS (cors.ts), problem
// documents (problem.ts) and the request recorder (metrics and the access log); what it must keep
// is listed with the other paths in src/http/request-invariants.ts.
import type { IncomingMessage, ServerResponse } from "node:http";

/** Takes the request (true) or leaves it to fastify (false); synchronous: it decides on the URL. */
export type RawRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

export class RawRoutes {
  private readonly routes: RawRoute[] = [];

  add(route: RawRoute): void {
    this.routes.push(route);
  }

  /** Whether a route took the request. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    for (const route of this.routes) if (route(req, res)) return true;
    return false;
  }
}
