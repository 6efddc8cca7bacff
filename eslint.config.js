import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Imports run one way: features (src/modules) → infrastructure → lib. Each layer may import its own
// and lower layers, never a higher one; the composition root (src/app.ts, src/runtime.ts,
// src/main.ts, src/index.ts) and the CLI sit on top. See docs/CONVENTIONS.md.
const LAYERS = [
  ["lib", "generated", "tenancy"],
  ["db"],
  ["idempotency"],
  ["events", "auth"],
  ["stream-engine", "webhook-delivery"],
  ["context"],
  ["graphql"],
  ["http"],
  ["modules"],
];
const TOP_FILES = "^(\\.\\./)+(app|runtime|main|index)\\.js$";
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
              message: "Only the composition root and the CLI import src/app.ts, src/runtime.ts or src/cli.",
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
    // tests read loosely-typed JSON responses
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
