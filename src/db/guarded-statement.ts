// A statement's verdict, kept: the tenant guard (tenant-guard.ts) reads a text once per process and
// the tenant's store (tenant-store.ts) and scoped Prisma client (tenant-scope.ts) ask this memo
// before every statement they run.
import { checkTenantBound, TenantGuardRefusal } from "./tenant-guard.js";

/**
 * Verdicts by statement text, then by the bound parameters: a statement is checked once per process
 * (a memo of a pure function). Keyed by the text itself, whose hash V8 keeps on the string: the hot
 * paths' texts are constants, so a lookup costs no hashing of a long string per call.
 */
const verdicts = new Map<string, Map<string, TenantGuardRefusal | null>>();
const TEXTS_KEPT = 5_000;

/** Throws TenantGuardRefusal when `text` is not tied to the tenant's id in the parameters `bound`. */
export function guardedStatement(text: string, bound: ReadonlySet<number>, boundKey = [...bound].join(",")): void {
  let byBound = verdicts.get(text);
  if (!byBound) {
    if (verdicts.size >= TEXTS_KEPT) verdicts.delete(verdicts.keys().next().value as string);
    byBound = new Map();
    verdicts.set(text, byBound);
  }
  let verdict = byBound.get(boundKey);
  if (verdict === undefined) {
    try {
      checkTenantBound(text, bound);
      verdict = null;
    } catch (err) {
      if (!(err instanceof TenantGuardRefusal)) throw err;
      verdict = err;
    }
    byBound.set(boundKey, verdict);
  }
  if (verdict) throw verdict;
}
