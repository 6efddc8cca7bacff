// Rate-limit leases: what one instance holds of a bucket's window in the shared store. A store call
// takes a few points more than its requests need; the instance's next requests of that bucket use
// them without a call. Pure accounting, used by src/auth/rate-limit.ts.
//
// Exact on one instance: a request is allowed from the lease only while what this instance has
// used plus the request stays within the budget, and the walk of a store answer subtracts what is
// held unused. Across instances the store counts every lease in full, so a bucket can only refuse
// early — by at most what the other instances hold unused (each at most MAX_LEASE points, and at
// most an eighth of what was left) — never allow more than its budget.

/** the most points one instance holds unused for a bucket */
export const MAX_LEASE = 64;
/** a lease this close to its window's end is not used (the store's window may roll first) */
export const WINDOW_MARGIN_MS = 1_000;

export interface Lease {
  /** when the store's window ends (Date.now milliseconds) */
  until: number;
  /** points taken from the store and not used yet */
  left: number;
  /** points used in the window as far as this instance knows (the store's count less what is left here) */
  used: number;
  /** the budget the lease was taken against */
  limit: number;
}

const live = (lease: Lease, now: number) => now < lease.until - WINDOW_MARGIN_MS;

/** Uses `points` of the lease when it has them (and is not near its window's end). */
export function useLease(lease: Lease, points: number, now: number): boolean {
  if (!live(lease, now) || lease.left < points) return false;
  lease.left -= points;
  lease.used += points;
  return true;
}

/**
 * Whether the lease already decides a refusal: what this instance has used plus the request is
 * past the budget (the store counts at least as much), so there is no need to ask the store.
 */
export function refusedByLease(lease: Lease, points: number, now: number): boolean {
  return live(lease, now) && lease.left < points && lease.used + points > lease.limit;
}

/** What a batch about to go to the store holds of the bucket's lease. */
export interface Claim {
  /** points held unused (the store already counts them), taken out of the lease so nothing else uses them meanwhile */
  carried: number;
  /** what this instance had used in the window when the lease was last updated */
  used: number;
  /** when the lease's window ends */
  until: number;
}

/** Takes the lease's unused points for a batch (none from a lease near its window's end or none at all). */
export function claimLease(lease: Lease | undefined, now: number): Claim {
  if (!lease || !live(lease, now)) return { carried: 0, used: 0, until: 0 };
  const carried = lease.left;
  lease.left = 0;
  return { carried, used: lease.used, until: lease.until };
}

/**
 * What a batch of `total` points asks of the store: what the carried points do not cover, plus a
 * lease of an eighth of what is left after it (at most MAX_LEASE). Zero when the carried points
 * cover the batch: then there is no store call. A window's first call takes no lease, so it is exact.
 */
export function storeAsk(limit: number, claim: Claim, total: number): { fromLease: number; ask: number; extra: number } {
  const fromLease = Math.min(claim.carried, total);
  if (fromLease === total) return { fromLease, ask: 0, extra: 0 };
  const extra = claim.until === 0 ? 0 : Math.max(0, Math.min(MAX_LEASE, Math.floor((limit - claim.used - total) / 8)));
  return { fromLease, ask: total - fromLease + extra, extra };
}

/**
 * What the instance had used before the batch, from the store's count after it: the count less the
 * batch's ask and less what this instance held unused (which the count includes).
 */
export const usedBefore = (consumed: number, ask: number, carried: number): number => consumed - ask - carried;

/** The lease after a batch: `used` is the walk's end (refused points count, as they do in the store). */
export function nextLease(o: { limit: number; used: number; left: number; until: number }): Lease {
  const used = Math.min(o.used, o.limit);
  return { until: o.until, limit: o.limit, used, left: Math.max(0, Math.min(o.left, o.limit - used)) };
}
