// A client process of the stream bench (bench/stream.ts starts several with IPC): it holds its share
// of the SSE streams and records when each `id:` line was read, on CLOCK_MONOTONIC (nowMs), so the
// driver can set those times against the moment each write left. Nothing is measured here; the
// driver asks with messages:
//   open    {url, key, discussions[], addresses[], batch}  one stream per entry, `batch` connecting at once,
//                                                           bound to the source addresses in turn
//   churn   {url, key, discussion, n}  close the n oldest extra streams of the discussion, open n new
//                                      (extra streams record nothing)
//   count   {keys[]}                   how many reads of these events were recorded
//   collect {t0: [eventKey, ms][]}     latencies (receive − t0) of every recorded read of those events
//                                      (reads before their write are ignored), and each event's first and
//                                      last read; the recordings are then cleared
//   close   {}                         every stream closed
// Each answer is {id, ok: true, …} or {id, ok: false, error}.

import { connect, type Client } from "./sse-client.js";

interface Request {
  id: number;
  op: "open" | "churn" | "count" | "collect" | "close";
  url?: string;
  key?: string;
  discussions?: string[];
  addresses?: string[];
  batch?: number;
  discussion?: string;
  n?: number;
  t0?: [string, number][];
  keys?: string[];
}

const clients: Client[] = [];
const churners: Client[] = [];
/** `${discussion}#${seq}` → every read of that event, in ms */
let reads = new Map<string, number[]>();
const record = (d: string, seq: number, at: number) => {
  const k = `${d}#${seq}`;
  const list = reads.get(k);
  if (list) list.push(at);
  else reads.set(k, [at]);
};
let nextAddress = 0;

async function handle(m: Request): Promise<Record<string, unknown>> {
  switch (m.op) {
    case "open": {
      const ds = m.discussions!;
      const addrs = m.addresses ?? [];
      const batch = m.batch ?? 500;
      for (let i = 0; i < ds.length; i += batch) {
        const opened = await Promise.all(
          ds
            .slice(i, i + batch)
            .map((d) => connect(m.url!, d, m.key!, record, {}, addrs.length ? addrs[nextAddress++ % addrs.length] : undefined)),
        );
        clients.push(...opened);
      }
      return { open: clients.length };
    }
    case "churn": {
      for (const c of churners.splice(0, m.n!)) c.close();
      const addrs = m.addresses ?? [];
      churners.push(
        ...(await Promise.all(
          Array.from({ length: m.n! }, () =>
            connect(m.url!, m.discussion!, m.key!, () => {}, {}, addrs.length ? addrs[nextAddress++ % addrs.length] : undefined),
          ),
        )),
      );
      return {};
    }
    case "count": {
      let count = 0;
      for (const k of m.keys!) count += reads.get(k)?.length ?? 0;
      return { count };
    }
    case "collect": {
      const latencies: number[] = [];
      const spans: [string, number, number][] = [];
      for (const [k, sent] of m.t0!) {
        let first = Infinity;
        let last = -Infinity;
        for (const at of reads.get(k) ?? []) {
          if (at < sent) continue;
          latencies.push(at - sent);
          if (at < first) first = at;
          if (at > last) last = at;
        }
        if (last >= first) spans.push([k, first, last]);
      }
      reads = new Map();
      return { latencies: Float64Array.from(latencies), spans };
    }
    case "close": {
      for (const c of clients.splice(0)) c.close();
      for (const c of churners.splice(0)) c.close();
      reads = new Map();
      return {};
    }
  }
}

process.on("message", (m: Request) => {
  handle(m).then(
    (answer) => process.send!({ id: m.id, ok: true, ...answer }),
    (err: unknown) => process.send!({ id: m.id, ok: false, error: String(err) }),
  );
});
process.on("disconnect", () => process.exit(0));
process.send!({ id: 0, ok: true, ready: true });
