// The instance's StreamHub, found from the app's services (GraphQL resolvers only see the context).
import type { AppServices } from "../context/request.js";
import { errors } from "../lib/errors.js";
import type { StreamHub } from "./hub.js";

const hubs = new WeakMap<AppServices, StreamHub>();

export function attachStreamHub(app: AppServices, hub: StreamHub): void {
  hubs.set(app, hub);
}

export function streamHubOf(app: AppServices): StreamHub {
  const hub = hubs.get(app);
  if (!hub) throw errors.unavailable("Streams are not served by this process.");
  return hub;
}
