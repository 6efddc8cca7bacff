// Query-string parsing for REST routes (types only; the rules live in the domain).
import { errors } from "../../lib/errors.js";

export type Query = Record<string, string | string[] | undefined>;

export function str(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw errors.invalidParameter([{ path: name, message: "must be given once" }]);
  return v === undefined || v === "" ? undefined : v;
}

export function int(q: Query, name: string): number | undefined {
  const v = str(q, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw errors.invalidParameter([{ path: name, message: "must be an integer" }]);
  return Number(v);
}

/** `true` or `false` (absent: undefined). */
export function bool(q: Query, name: string): boolean | undefined {
  const v = str(q, name);
  if (v === undefined) return undefined;
  if (v !== "true" && v !== "false") throw errors.invalidParameter([{ path: name, message: "must be true or false" }]);
  return v === "true";
}
