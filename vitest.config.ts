import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // graphql@16 has no exports map: make Vite load the same CJS build that yoga and graphql-sse load.
    alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }],
  },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
  },
});
