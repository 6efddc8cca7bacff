// The admin console (contract section 10): Preact + Vite, built into dist/console and served by the
// service at /console/ (src/http/console-static.ts). `npm run build:console` (run on install).
import { defineConfig } from "vite";
import preact from "@preact/preset-vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/console/",
  plugins: [preact()],
  build: { outDir: "../dist/console", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 600 },
  server: { proxy: { "/graphql": "http://127.0.0.1:3000", "/api": "http://127.0.0.1:3000", "/console/auth": "http://127.0.0.1:3000" } },
});
