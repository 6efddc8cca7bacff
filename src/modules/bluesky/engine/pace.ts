// When a linked post's thread is read next (contract section 30: "at most every 60 s a discussion
// while it has readers or new replies, less often as it ages"). Pure: the poller asks it after each read.
//   a read that failed (the AppView down or slow, the account refused): 1 min, 2, 4 … at most 1 h
//   a discussion with readers now (a stream open on it) or a reply new or gone within the hour: 60 s
//   quiet for less than a day: 5 min; less than a week: 30 min; a month: 3 h; older: 12 h
export const MIN_POLL_MS = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const MAX_BACKOFF_MS = HOUR;

export interface PaceInput {
  now: Date;
  /** when the link was made */
  linkedAt: Date;
  /** when a read last found a reply new or gone */
  changedAt: Date | null;
  /** reads failed in a row, this one included */
  failures: number;
  /** someone is reading the discussion now */
  readers?: boolean;
}

/** Milliseconds until the next read. */
export function nextPollDelay(p: PaceInput): number {
  if (p.failures > 0) return Math.min(MIN_POLL_MS * 2 ** Math.min(p.failures - 1, 20), MAX_BACKOFF_MS);
  if (p.readers) return MIN_POLL_MS;
  const quiet = p.now.getTime() - (p.changedAt ?? p.linkedAt).getTime();
  if (quiet < HOUR) return MIN_POLL_MS;
  if (quiet < DAY) return 5 * 60_000;
  if (quiet < 7 * DAY) return 30 * 60_000;
  if (quiet < 30 * DAY) return 3 * HOUR;
  return 12 * HOUR;
}
