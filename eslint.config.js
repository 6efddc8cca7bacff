import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Imports run one way: features (src/modules) → infrastructure → lib. Each layer may import its own
// and lower layers, never a higher one; the composition root (src/app.ts, src/runtime.ts, src/workers.ts,
// src/main.ts, src/index.ts) and the CLI sit on top. See docs/CONVENTIONS.md.
const LAYERS = [
  ["lib", "generated", "tenancy"],
  ["db"],
  ["idempotency"],
  ["events", "auth"],
  ["stream-engine", "outbound"],
  ["context"],
  ["graphql"],
  ["http"],
  ["modules"],
];
const TOP_FILES = "^(\\.\\./)+(app|runtime|workers|main|index)\\.js$";
const boundaries = LAYERS.map((dirs, i) => {
  const higher = LAYERS.slice(i + 1).flat();
  return {
    files: dirs.map((d) => `src/${d}/**/*.ts`),
    ignores: ["src/generated/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...(higher.length
              ? [
                  {
                    regex: `(^|/)(${higher.join("|")})/`,
                    message: `src/${dirs.join(", src/")} may not import a higher layer (${higher.join(", ")}).`,
                  },
                ]
              : []),
            {
              regex: `${TOP_FILES}|(^|/)cli/`,
              message: "Only the composition root and the CLI import src/app.ts, src/runtime.ts, src/workers.ts or src/cli.",
            },
          ],
        },
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ["node_modules", "dist", "data", "src/generated", "test/generated", "console/src/gql", "coverage"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // type-aware rules: promises are awaited or handled, and never passed where a void callback goes
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false, attributes: false } }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/require-await": "off",
    },
  },
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  ...boundaries,
  {
    // Tenancy by construction: feature code reaches a tenant's data only through the request's store —
    // `db(ctx)` (the tenant-scoped Prisma client), `store(ctx).sql` (plain SQL whose $1 is the
    // tenant's id, each statement checked by the tenant guard) and `store(ctx).write` (the
    // event-appending writes, the tenant's id bound as $1 the same way) and `writeTx(ctx, fn)` (a
    // transaction of the request's tenant, src/events/write-tx.ts): src/db/tenant-store.ts. The app's raw
    // clients are for the engines (`src/modules/*/engine/`: workers and jobs that cross tenants, and
    // the doors that find the tenant — sign-in, one-click unsubscribe, tenant creation).
    files: ["src/modules/**/*.ts"],
    ignores: ["src/modules/*/engine/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "MemberExpression[property.name=/^(prisma|sql|scoped|stores)$/]:not([object.type='CallExpression'][object.callee.name='store']):not([object.name='Prisma'])",
          message:
            "Feature code reaches tenant data through db(ctx) or store(ctx).sql (src/db/tenant-store.ts); work across tenants belongs in an engine/ folder.",
        },
        {
          selector: "MemberExpression[property.name=/^\\$(queryRawUnsafe|executeRawUnsafe)$/]",
          message: "Raw statements are tagged templates ($queryRaw`…`), checked by the tenant guard.",
        },
        {
          selector:
            "ImportDeclaration[source.value=/generated\\/prisma\\/client\\.js$/] ImportSpecifier[imported.name='PrismaClient'], ImportDeclaration[source.value=/db\\/sql\\.js$/]",
          message: "The raw clients are for engines (src/modules/*/engine/); feature code uses db(ctx) and store(ctx).sql.",
        },
        {
          selector: "CallExpression[callee.name='writeTx'][arguments.length>2]",
          message:
            "Feature code's transactions are its request's tenant's: writeTx(ctx, fn) (src/events/write-tx.ts) takes the tenant from ctx; a transaction of a tenant named by hand (across tenants) belongs in an engine/ folder.",
        },
        {
          selector: "ImportDeclaration[source.value=/events\\/statement\\.js$/]",
          message:
            'Feature code writes through store(ctx).write("eng_…", args) (src/context/request.ts), which binds the tenant\'s id; writes across tenants belong in an engine/ folder.',
        },
      ],
    },
  },
  {
    // tests read loosely-typed JSON responses
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
