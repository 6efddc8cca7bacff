// An input of optional delivery tunables (tenant settings patch, endpoint overrides), built from the
// one list of their names (DELIVERY_TUNABLES); values are checked by the domain's zod schema.
import { DELIVERY_TUNABLES } from "../tenancy/settings/delivery.js";
import { builder } from "./builder.js";

export function deliveryTunablesInput(name: string, description?: string) {
  return builder.inputType(name, {
    ...(description ? { description } : {}),
    fields: (t) => Object.fromEntries(DELIVERY_TUNABLES.map((k) => [k, t.int()])),
  });
}
