#!/usr/bin/env node
// The `engagement` bin: runs the TypeScript CLI through tsx.
import { tsImport } from "tsx/esm/api";

await tsImport("../src/cli/index.ts", import.meta.url);
