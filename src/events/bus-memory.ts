/**
 * In-process bus (REDIS_URL unset: single instance only). Behaves like the Redis bus where it
 * can: delivery is asynchronous (a microtask after publish), messages travel as JSON (the
 * listener never shares an object with the publisher), a message reaches only the listeners
 * that were subscribed when it was published and still are when it is delivered, and the
 * order of publishes is kept. Discussions' channels and readers' channels (reader pokes) are
 * kept apart by their keys.
 */
import {
  BusClosedError,
  dispatchSafely,
  parseBusMessage,
  parseReaderPoke,
  serializeBusMessage,
  serializeReaderPoke,
  type EventBus,
} from "./bus-shared.js";

export interface MemoryBusOptions {
  /** Errors thrown by listeners. Default: console.error. */
  onError?: (err: Error) => void;
}

interface Registration {
  listener: (msg: never) => void;
}

export function createMemoryBus(opts: MemoryBusOptions = {}): EventBus {
  const onError = opts.onError ?? ((err: Error) => console.error("[event-bus] listener failed:", err));
  // Keyed by JSON.stringify([kind, tenantId, id]): unambiguous for any id characters.
  const channels = new Map<string, Set<Registration>>();
  let closed = false;

  const key = (kind: "ev" | "rd", tenantId: string, id: string) => JSON.stringify([kind, tenantId, id]);

  function send<M>(k: string, wire: string, parse: (raw: string) => M | null): void {
    const set = channels.get(k);
    if (!set || set.size === 0) return;
    const targets = [...set];
    queueMicrotask(() => {
      if (closed) return;
      const current = channels.get(k);
      if (!current) return;
      const live = targets.filter((reg) => current.has(reg)).map((reg) => reg.listener as (msg: M) => void); // not unsubscribed since
      const copy = parse(wire);
      if (copy && live.length > 0) dispatchSafely(live, copy, onError);
    });
  }

  function listen(k: string, listener: (msg: never) => void): () => Promise<void> {
    if (typeof listener !== "function") throw new TypeError("listener must be a function");
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
  }

  return {
    async publish(msg) {
      if (closed) throw new BusClosedError();
      send(key("ev", msg.tenantId, msg.discussionId), serializeBusMessage(msg), parseBusMessage);
    },

    async subscribe(tenantId, discussionId, listener) {
      if (closed) throw new BusClosedError();
      return listen(key("ev", tenantId, discussionId), listener);
    },

    async pokeReader(poke) {
      if (closed) throw new BusClosedError();
      send(key("rd", poke.tenantId, poke.readerId), serializeReaderPoke(poke), parseReaderPoke);
    },

    async subscribeReader(tenantId, readerId, listener) {
      if (closed) throw new BusClosedError();
      return listen(key("rd", tenantId, readerId), listener);
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
