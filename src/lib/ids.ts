import { randomFillSync, randomUUID } from "node:crypto";
import { errors } from "./errors.js";

/** 12 random bytes an id; the random source is read 256 ids at a time (as node's randomUUID does). */
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 256);
let next = pool.length;

/** Opaque, sortable-enough ids with a type prefix: `cmt_…`, `key_…`. */
export function newId(prefix: string): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = pool.toString("base64url", next, next + ID_BYTES);
  next += ID_BYTES;
  return `${prefix}_${id}`;
}

export const uuid = (): string => randomUUID();

/** Discussion ids are chosen by the tenant (e.g. an article slug). */
export const DISCUSSION_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
export const DISCUSSION_ID_RULE = "must be 1–128 characters of A-Z a-z 0-9 . _ : -";

export function checkDiscussionId(id: string, path = "discussionId"): string {
  if (!DISCUSSION_ID_RE.test(id)) throw errors.validation([{ path, message: DISCUSSION_ID_RULE }]);
  return id;
}
