// GraphQL Code Generator: typed documents for the REST route table (src/modules/*/operations.graphql) and for
// the tests (test/operations). Run `npm run codegen` after changing schema.graphql or a document.
import type { CodegenConfig } from "@graphql-codegen/cli";

const plugins = ["typescript-operations", "typed-document-node"];
const config: CodegenConfig = {
  schema: "schema.graphql",
  config: {
    scalars: { DateTime: "string", JSON: "unknown" },
    enumsAsTypes: true,
    useTypeImports: true,
    avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
  },
  generates: {
    "src/generated/operations.ts": { documents: "src/modules/**/operations.graphql", plugins },
    "test/generated/operations.ts": { documents: "test/operations/**/*.graphql", plugins },
  },
};
export default config;
