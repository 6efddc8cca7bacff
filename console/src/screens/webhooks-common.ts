// What the webhook screens share: the per-endpoint delivery tunables, a state's label and the
// events field's parsing.
export const TUNABLES = [
  "maxAttempts",
  "backoffBaseMs",
  "attemptTimeoutMs",
  "breakerThreshold",
  "breakerCooldownMs",
  "disableThreshold",
] as const;

export const stateLabel = (s: string) => (s === "circuit_open" ? "circuit open" : s);

/** "a, b,,c" → ["a", "b", "c"] */
export const events = (v: string) =>
  v
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
