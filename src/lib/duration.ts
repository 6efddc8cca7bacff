/** "90s", "30m", "1h", "7d" (or plain seconds) → seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!m) throw new Error(`Invalid duration '${text}': use e.g. 90s, 30m, 1h, 7d`);
  const n = Number(m[1]);
  const mult = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "" | "s" | "m" | "h" | "d"];
  if (n <= 0) throw new Error(`Invalid duration '${text}': must be positive`);
  return n * mult;
}
