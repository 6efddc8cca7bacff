// Auto-close (contract section 21): discussions older than their tenant's `autoLockAfterDays` (0, the
// default: never) are locked as by POST /discussions/{id}/lock — one `discussion_locked` event each,
// streamed and delivered as any other, and an audit entry by the system (`actor_type` "system",
// `actor_id` "auto-close"). A pass is one statement, eng_auto_lock_discussions
// (prisma/sql/50-discussions.sql), run on one instance at a time (a transaction-scoped advisory lock:
// a pass elsewhere at the same moment answers 0 at once) for at most BATCH discussions; a pass that
// filled its batch runs again at once. Every instance runs the job every AUTO_CLOSE_INTERVAL_MS
// (default 30 s, so a discussion is locked within a minute of passing its age). Time comes from the
// injectable clock.
// Under engine/: a pass is no tenant's request — it locks the due discussions of every tenant at once
// (each locked as its own tenant's: the function reads each discussion's tenant's setting), so it runs
// on the app's raw SQL (`writeAcrossTenants`), not through a tenant's store.
import type { Logger } from "pino";
import type { Clock } from "../../../lib/clock.js";
import { writeAcrossTenants, type StatementServices } from "../../../events/statement.js";

/** discussions locked by one statement at most */
export const BATCH = 500;

export interface AutoCloseJob {
  /** One pass: how many discussions it locked (0 also when another instance is running one). */
  runOnce(): Promise<number>;
  start(intervalMs: number): void;
  stop(): void;
}

export function createAutoCloseJob(deps: { app: StatementServices; clock: Clock; log: Logger }): AutoCloseJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | null = null;

  async function pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const { locked } = await writeAcrossTenants(deps.app, "eng_auto_lock_discussions", { at: deps.clock.now(), limit: BATCH });
      total += locked;
      if (locked < BATCH) break;
    }
    if (total > 0) deps.log.info({ locked: total }, "auto-close: discussions locked");
    return total;
  }

  function runOnce(): Promise<number> {
    // one pass of this instance at a time
    running ??= pass().finally(() => (running = null));
    return running;
  }

  return {
    runOnce,
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(() => void runOnce().catch((err: unknown) => deps.log.warn({ err }, "auto-close pass failed")), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
