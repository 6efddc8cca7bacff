// A request's headers as the service reads them: Fastify's object of them or a fetch Headers, and one
// header's first value (null when absent or empty).
export type HeaderBag = { get(name: string): string | null | undefined } | Record<string, string | string[] | undefined>;

export function header(h: HeaderBag, name: string): string | null {
  if (typeof (h as { get?: unknown }).get === "function") {
    return ((h as { get(n: string): string | null | undefined }).get(name) ?? null) || null;
  }
  const v = (h as Record<string, string | string[] | undefined>)[name];
  return (Array.isArray(v) ? v[0] : v) || null;
}
