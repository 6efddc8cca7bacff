/**
 * The circuit breaker's state lives in the endpoint row (state, consecutive_failures,
 * circuit_open_until), so every worker process shares it. Transitions are computed by the pure
 * functions of breaker.ts and written atomically:
 *  - failures: read the row FOR UPDATE, apply onFailure/onGone, write it back (one transaction,
 *    so concurrent workers count every failure and agree on the transition);
 *  - the single trial of an open circuit: a conditional UPDATE that only one worker can win
 *    (startTrial pushes circuit_open_until one cooldown ahead, so the others keep holding);
 *  - success: a conditional UPDATE equal to onSuccess (skipped when the row is already clean,
 *    which keeps the hot path at zero extra writes).
 */
import type { PrismaClient } from "../generated/prisma/client.js";
import { onFailure, onGone, onSuccess, startTrial, type BreakerState, type BreakerTunables, type EndpointState } from "./breaker.js";

interface Row {
  state: EndpointState;
  consecutive_failures: number;
  circuit_open_until: Date | null;
}

const toBreaker = (r: Row): BreakerState => ({
  state: r.state,
  consecutiveFailures: r.consecutive_failures,
  openedUntil: r.circuit_open_until,
});

/** Wins the one trial attempt of an open circuit whose cooldown is over; false = keep holding. */
export async function claimTrial(prisma: PrismaClient, endpointId: string, now: Date, tunables: BreakerTunables): Promise<boolean> {
  const next = startTrial({ state: "circuit_open", consecutiveFailures: 0, openedUntil: now }, now, tunables);
  const won = await prisma.$executeRaw`
    UPDATE webhook_endpoints SET circuit_open_until = ${next.openedUntil}::timestamptz
     WHERE id = ${endpointId} AND state = 'circuit_open'
       AND (circuit_open_until IS NULL OR circuit_open_until <= ${now}::timestamptz)`;
  return won === 1;
}

/**
 * A 2xx: writes what breaker.onSuccess makes of any state that is not disabled (a disabled endpoint
 * stays disabled: onSuccess returns it unchanged, so the row is left alone), and nothing when the
 * row is already clean — the hot path costs no extra write.
 */
export async function recordSuccess(prisma: PrismaClient, endpointId: string, now: Date): Promise<void> {
  const closed = onSuccess({ state: "circuit_open", consecutiveFailures: 1, openedUntil: now });
  await prisma.$executeRaw`
    UPDATE webhook_endpoints
       SET state = ${closed.state}::"WebhookState", consecutive_failures = ${closed.consecutiveFailures},
           circuit_open_until = ${closed.openedUntil}::timestamptz, updated_at = ${now}::timestamptz
     WHERE id = ${endpointId} AND state <> 'disabled'
       AND (consecutive_failures <> ${closed.consecutiveFailures} OR state <> ${closed.state}::"WebhookState" OR circuit_open_until IS NOT NULL)`;
}

/** A failed attempt (or 410 Gone): counts it and applies the breaker's transition. Returns the new state. */
export async function recordFailure(
  prisma: PrismaClient,
  endpointId: string,
  now: Date,
  tunables: BreakerTunables,
  gone: boolean,
): Promise<BreakerState | null> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Row[]>`
      SELECT state::text AS state, consecutive_failures, circuit_open_until
        FROM webhook_endpoints WHERE id = ${endpointId} FOR UPDATE`;
    const row = rows[0];
    if (!row) return null;
    const current = toBreaker(row);
    const next = gone ? onGone(current) : onFailure(current, now, tunables);
    const disabledNow = next.state === "disabled" && current.state !== "disabled";
    await tx.$executeRaw`
      UPDATE webhook_endpoints
         SET state = ${next.state}::"WebhookState", consecutive_failures = ${next.consecutiveFailures},
             circuit_open_until = ${next.openedUntil}::timestamptz,
             disabled_at = CASE WHEN ${disabledNow} THEN ${now}::timestamptz ELSE disabled_at END,
             updated_at = ${now}::timestamptz
       WHERE id = ${endpointId}`;
    return next;
  });
}
