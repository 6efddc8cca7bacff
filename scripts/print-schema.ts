// npm run schema:print — writes schema.graphql from the Pothos schema; `--check` fails on drift (CI).
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { printSchema } from "graphql";
import { schema } from "../src/modules/schema.js";
import { repoRoot } from "../src/db/paths.js";

const path = `${repoRoot}schema.graphql`;
const printed = `${printSchema(schema)}\n`;
if (process.argv.includes("--check")) {
  const current = existsSync(path) ? readFileSync(path, "utf8") : "";
  if (current !== printed) {
    console.error("schema.graphql is out of date: run `npm run schema:print` and commit it.");
    process.exit(1);
  }
  console.log("schema.graphql is up to date.");
} else {
  writeFileSync(path, printed);
  console.log(`Wrote ${path}`);
}
