// The error codes of /graphql live in src/http/graphql/errors.ts; this name stays for
// test/graphql-errors.test.ts, which imports it from here.
export * from "./graphql/errors.js";
