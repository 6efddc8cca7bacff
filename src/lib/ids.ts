import { randomBytes, randomUUID } from "node:crypto";
import { errors } from "./errors.js";

/** Opaque, sortable-enough ids with a type prefix: `cmt_…`, `key_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export const uuid = (): string => randomUUID();

/** Discussion ids are chosen by the tenant (e.g. an article slug). */
export const DISCUSSION_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
export const DISCUSSION_ID_RULE = "must be 1–128 characters of A-Z a-z 0-9 . _ : -";

export function checkDiscussionId(id: string, path = "discussionId"): string {
  if (!DISCUSSION_ID_RE.test(id)) throw errors.validation([{ path, message: DISCUSSION_ID_RULE }]);
  return id;
}
