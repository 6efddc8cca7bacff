// A stream that cannot start because the event bus cannot be reached is 503 (retry shortly).
import { BusClosedError, BusTimeoutError, BusUnavailableError } from "../events/bus.js";
import { errors } from "../lib/errors.js";

/** A bus that cannot be reached is 503; any other failure is itself. */
export function unavailableOr(err: unknown): unknown {
  if (err instanceof BusTimeoutError || err instanceof BusClosedError || err instanceof BusUnavailableError) {
    return errors.unavailable("The event bus is unavailable; retry shortly.");
  }
  return err;
}
