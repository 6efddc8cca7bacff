// GraphQL Code Generator: typed documents for the REST route table (src/modules/*/operations.graphql) and for
// the tests (test/operations; test/operations/client with the client preset). Run `npm run codegen` after changing schema.graphql or a document.
import type { CodegenConfig } from "@graphql-codegen/cli";

const plugins = ["typescript-operations", "typed-document-node"];
const config: CodegenConfig = {
  schema: "schema.graphql",
  // ESM imports between generated files carry .js, as NodeNext resolution wants
  importExtension: ".js",
  config: {
    scalars: { DateTime: "string", JSON: "unknown" },
    enumsAsTypes: true,
    useTypeImports: true,
    avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
  },
  generates: {
    "src/generated/operations.ts": { documents: "src/modules/**/operations.graphql", plugins },
    "test/generated/operations.ts": { documents: ["test/operations/**/*.graphql", "!test/operations/client/**"], plugins },
    // what a frontend team would generate: the client preset over its own documents (test/graphql-clients.test.ts)
    "test/generated/client/": {
      preset: "client",
      documents: "test/operations/client/**/*.graphql",
      config: { scalars: { DateTime: "string", JSON: "unknown" }, enumsAsTypes: true, useTypeImports: true },
    },
    // the admin console's documents (console/src/operations.graphql)
    "console/src/gql/": {
      preset: "client",
      documents: "console/src/**/*.graphql",
      presetConfig: { fragmentMasking: false },
      config: { scalars: { DateTime: "string", JSON: "unknown" }, enumsAsTypes: true, useTypeImports: true, documentMode: "string" },
    },
  },
};
export default config;
