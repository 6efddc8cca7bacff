/**
 * The delivery worker's slots (worker.ts): which of its claimed jobs may start an attempt now.
 *
 * Attempts in flight are capped (fairness, unchanged): at most `concurrency` in the worker,
 * `maxPerEndpoint` for one endpoint and `maxPerTenant` for one tenant. A worker also holds claimed
 * jobs ready to start: the moment an attempt is answered, the next job of that endpoint starts,
 * without waiting for a claim's round trip (without them, one endpoint's drain kept its 16 slots
 * busy only part of the time). The worker's claims count what is held (in flight + ready) against
 * a multiple of the caps (worker.ts HOLD_FACTOR).
 */
export interface SlotLimits {
  concurrency: number;
  maxPerEndpoint: number;
  maxPerTenant: number;
}

interface Holder {
  endpointId: string;
  tenantId: string;
}

interface Waiting extends Holder {
  start: (go: boolean) => void;
}

export interface Slots {
  /** jobs held (ready or in flight), by endpoint and tenant: what a claim must count */
  readonly heldEndpoints: ReadonlyMap<string, number>;
  readonly heldTenants: ReadonlyMap<string, number>;
  held(): number;
  /** A claimed job: resolves true once it may start its attempt (a slot is counted), false if given back unstarted. */
  take(job: Holder): Promise<boolean>;
  /** Its attempt is over (or it never started): its slot and its hold go back; ready jobs start. */
  done(job: Holder, started: boolean): void;
  /** Jobs still waiting for a slot are given back (of one endpoint, or all). */
  cancelReady(endpointId?: string): void;
}

const shift = (m: Map<string, number>, k: string, d: number) => {
  const n = (m.get(k) ?? 0) + d;
  if (n > 0) m.set(k, n);
  else m.delete(k);
};

export function createSlots(limits: SlotLimits): Slots {
  let sending = 0;
  const sendingEp = new Map<string, number>();
  const sendingT = new Map<string, number>();
  let held = 0;
  const heldEp = new Map<string, number>();
  const heldT = new Map<string, number>();
  /** oldest claim first */
  let ready: Waiting[] = [];

  const fits = (j: Holder) =>
    sending < limits.concurrency &&
    (sendingEp.get(j.endpointId) ?? 0) < limits.maxPerEndpoint &&
    (sendingT.get(j.tenantId) ?? 0) < limits.maxPerTenant;
  const occupy = (j: Holder) => {
    sending++;
    shift(sendingEp, j.endpointId, 1);
    shift(sendingT, j.tenantId, 1);
  };

  function pump(): void {
    if (!ready.length || sending >= limits.concurrency) return;
    const still: Waiting[] = [];
    for (const w of ready) {
      if (fits(w)) {
        occupy(w);
        w.start(true);
      } else {
        still.push(w);
      }
    }
    ready = still;
  }

  return {
    heldEndpoints: heldEp,
    heldTenants: heldT,
    held: () => held,
    take(job) {
      held++;
      shift(heldEp, job.endpointId, 1);
      shift(heldT, job.tenantId, 1);
      if (fits(job)) {
        occupy(job);
        return Promise.resolve(true);
      }
      return new Promise<boolean>((start) => ready.push({ endpointId: job.endpointId, tenantId: job.tenantId, start }));
    },
    done(job, started) {
      held--;
      shift(heldEp, job.endpointId, -1);
      shift(heldT, job.tenantId, -1);
      if (started) {
        sending--;
        shift(sendingEp, job.endpointId, -1);
        shift(sendingT, job.tenantId, -1);
      }
      pump();
    },
    cancelReady(endpointId) {
      const gone = ready.filter((w) => endpointId === undefined || w.endpointId === endpointId);
      if (!gone.length) return;
      ready = ready.filter((w) => !gone.includes(w));
      for (const w of gone) w.start(false);
    },
  };
}
