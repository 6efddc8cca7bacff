import { defineConfig } from "vitest/config";

// Projects: `npm test` runs unit and integration tests (the default project); `npm run test:browser`
// the tests that drive headless Chromium (test/browser/: the console, the embed, GraphiQL, pages a
// person looks at); the black-box contract suite (test/contract/*.test.ts: the real CLI and one
// server process for the run, started by test/support/contract-server.ts; nothing imported from
// src/) by `npm run test:contract`; the engines' projects by `npm run test:engines`. CI runs them all.
// The files whose subject is a process of their own (a crash and restart, the CLI's binary, `npm start`
// on the embedded database, the README's commands, servers of one presence cluster): each starts
// node processes on dist/ and waits for them, a third of `npm test`'s time. They run in the
// `processes` project, part of `npm run test:engines` (CI runs it), not in `npm test`.
const PROCESS_FILES = [
  "test/email-crash.test.ts",
  "test/erasure-crash.test.ts",
  "test/webhooks-crash.test.ts",
  "test/portability-cli.test.ts",
  "test/readme.test.ts",
  "test/embedded.test.ts",
  "test/presence.test.ts",
];

export default defineConfig({
  resolve: {
    // graphql@16 has no exports map: make Vite load the same CJS build that yoga and graphql-sse load.
    alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }],
  },
  test: {
    // A test's time limit is a hang detector, not a speed check (tests assert behaviour, not time): on
    // this 2-core machine under another job's load, a test that starts a child process (a server on
    // dist/, the CLI) or type-checks generated code takes three to five times its quiet time, and
    // passed 30 s where it passes in 5 to 10 s on a quiet one.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    // vitest's default is one worker less than the cores: one file at a time on a 2-core machine.
    // The files mostly wait (on servers, PostgreSQL, Redis, timers and browsers), so three at once.
    maxWorkers: 3,
    // Test files share their worker's module cache (they isolate by tenant, not by process): the
    // app is imported once per worker instead of once per file — about a third of the suite's time.
    isolate: false,
    // Transformed modules are kept on disk between runs (node_modules/.experimental-vitest-cache, keyed
    // by each file's content and the config): a run after the first transforms only what changed.
    experimental: { fsModuleCache: true },
    projects: [
      {
        extends: true,
        test: {
          name: "default",
          include: ["test/**/*.test.ts", "src/**/*.test.ts"],
          // the engines' own tests need the engines their projects start (npm run test:engines)
          exclude: ["test/contract/**", "test/engines/**", "test/browser/**", ...PROCESS_FILES],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          // a page's answer to a change (a re-render, a refetch) waits on the browser, the server and
          // the machine's load: expect.poll's own 1 s was missed on a busy 2-core CI machine
          expect: { poll: { timeout: 10_000 } },
        },
      },
      // `npm run test:engines`: integration files run again through engines started by the project's
      // setup — a transaction-mode PgBouncer in front of the run's database (pooler), a 3-master Redis
      // Cluster (cluster) — plus the tests of those engines' own failure modes (test/engines/).
      {
        extends: true,
        test: {
          name: "pooler",
          include: [
            "test/engines/pooler*.test.ts",
            "test/{comments,comments-list,reactions,idempotency,write-integrity,stream-replay,stream-resume,stream-me,webhooks-delivery,event-partitions,event-log-migration}.test.ts",
          ],
          globalSetup: ["test/support/pooler-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "cluster",
          include: [
            "test/engines/cluster*.test.ts",
            "test/{stream,stream-replay,stream-resume,stream-me,stream-limits,stream-visibility,stream-graphql,auth-cache,errors,graphql-protection}.test.ts",
          ],
          globalSetup: ["test/support/cluster-setup.ts"],
        },
      },
      // read replicas: the test starts its own primary and streaming standby (test/engines/replicas.test.ts)
      {
        extends: true,
        test: { name: "replica", include: ["test/engines/replica*.test.ts"], globalSetup: ["test/support/global-setup.ts"] },
      },
      {
        extends: true,
        test: { name: "processes", include: PROCESS_FILES, globalSetup: ["test/support/global-setup.ts"] },
      },
      {
        extends: true,
        test: { name: "contract", include: ["test/contract/**/*.test.ts"], globalSetup: ["test/support/contract-server.ts"] },
      },
    ],
  },
});
