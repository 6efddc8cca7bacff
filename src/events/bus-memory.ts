/**
 * In-process bus (REDIS_URL unset: single instance only). Behaves like the Redis bus where it
 * can: delivery is asynchronous (a microtask after publish), messages travel as JSON (the
 * listener never shares an object with the publisher), a message reaches only the listeners
 * that were subscribed when it was published and still are when it is delivered, and the
 * order of publishes is kept.
 */
import { BusClosedError, dispatchSafely, parseBusMessage, serializeBusMessage, type BusListener, type EventBus } from "./bus-shared.js";

export interface MemoryBusOptions {
  /** Errors thrown by listeners. Default: console.error. */
  onError?: (err: Error) => void;
}

interface Registration {
  listener: BusListener;
}

export function createMemoryBus(opts: MemoryBusOptions = {}): EventBus {
  const onError = opts.onError ?? ((err: Error) => console.error("[event-bus] listener failed:", err));
  // Keyed by JSON.stringify([tenantId, discussionId]): unambiguous for any id characters.
  const channels = new Map<string, Set<Registration>>();
  let closed = false;

  const key = (tenantId: string, discussionId: string) => JSON.stringify([tenantId, discussionId]);

  return {
    async publish(msg) {
      if (closed) throw new BusClosedError();
      const wire = serializeBusMessage(msg);
      const set = channels.get(key(msg.tenantId, msg.discussionId));
      if (!set || set.size === 0) return;
      const targets = [...set];
      queueMicrotask(() => {
        if (closed) return;
        const current = channels.get(key(msg.tenantId, msg.discussionId));
        if (!current) return;
        const live = targets.filter((reg) => current.has(reg)).map((reg) => reg.listener); // not unsubscribed since
        const copy = parseBusMessage(wire);
        if (copy && live.length > 0) dispatchSafely(live, copy, onError);
      });
    },

    async subscribe(tenantId, discussionId, listener) {
      if (closed) throw new BusClosedError();
      if (typeof listener !== "function") throw new TypeError("listener must be a function");
      const k = key(tenantId, discussionId);
      const reg: Registration = { listener };
      let set = channels.get(k);
      if (!set) {
        set = new Set();
        channels.set(k, set);
      }
      set.add(reg);
      return async () => {
        const s = channels.get(k);
        if (!s) return;
        s.delete(reg);
        if (s.size === 0) channels.delete(k);
      };
    },

    onReconnect() {
      // An in-process bus never loses its "connection".
      return () => {};
    },

    async close() {
      closed = true;
      channels.clear();
    },
  };
}
