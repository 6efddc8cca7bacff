// graphql-sse's single-connection handler only treats a result as an ExecutionResult when it has a
// `data` member, while graphql-js answers a failed subscribe (auth, 404) with `{ errors }` alone;
// the handler then answers 400 "Unable to detect operation AST" instead of streaming the errors.
// Adding `data: null` (valid per the GraphQL spec for such errors) makes both modes stream them.
import type { ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";

function isIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === "object" && v !== null && Symbol.asyncIterator in v;
}

export function useSubscribeErrorsWithData(): Plugin {
  return {
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (isIterable(result)) return;
          const r = result as ExecutionResult;
          if (r.errors && !("data" in r)) setResult({ ...r, data: null });
        },
      };
    },
  };
}
