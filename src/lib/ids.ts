import { randomBytes, randomUUID } from "node:crypto";

/** Opaque, sortable-enough ids with a type prefix: `cmt_…`, `key_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export const uuid = (): string => randomUUID();
