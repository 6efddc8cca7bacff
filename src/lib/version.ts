// The service's version, from package.json (one place to bump).
import { readFileSync } from "node:fs";

export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
