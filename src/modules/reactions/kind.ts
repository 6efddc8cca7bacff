// A reaction's kind, on a comment or on the page: one of the tenant's list for it (a setting).
import { z } from "zod";
import { errors } from "../../lib/errors.js";

/** The input schema per list of kinds: built once, not per request. */
const kindSchemas = new WeakMap<readonly string[], z.ZodType<{ kind: string }>>();

function kindSchema(kinds: readonly string[]) {
  let schema = kindSchemas.get(kinds);
  if (!schema) {
    schema = z.object({
      kind: z
        .string({ error: (i) => (i.input === undefined || i.input === null ? "is required" : "must be a string") })
        .refine((k) => kinds.includes(k), `must be one of ${kinds.join(", ")}`),
    });
    kindSchemas.set(kinds, schema);
  }
  return schema;
}

/** The input's kind when it is one of `kinds`; else 422 with the problem at `kind`. */
export function parseKind(kinds: readonly string[], input: { kind?: string | null | undefined } | null | undefined): string {
  const parsed = kindSchema(kinds).safeParse(input ?? {});
  if (!parsed.success) {
    throw errors.validation(parsed.error.issues.map((i) => ({ path: String(i.path[0] ?? "kind"), message: i.message })));
  }
  return parsed.data.kind;
}
