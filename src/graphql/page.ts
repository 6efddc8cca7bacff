import { builder } from "./builder.js";
import type { Page } from "../lib/pagination.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Pothos refs are invariant in their shape
type AnyRef<T> = import("@pothos/core").ObjectRef<any, T>;

export function definePage<T>(name: string, itemRef: AnyRef<T>) {
  return builder.objectRef<Page<T>>(name).implement({
    fields: (t) => ({
      items: t.field({ type: [itemRef], resolve: (p) => p.items }),
      nextCursor: t.exposeString("nextCursor", { nullable: true }),
    }),
  });
}
