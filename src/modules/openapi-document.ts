// The service's OpenAPI document (GET /api/v1/openapi.json): generated from the REST route table and
// the schema (src/http/rest/openapi.ts), with the routes whose bodies are not JSON described by their
// rooms — import and export (src/modules/portability/openapi.ts), the unsubscribe link
// (src/modules/email/openapi.ts), the feeds (src/modules/feeds/openapi.ts), the indexable thread
// (src/modules/indexable/openapi.ts), the hosted sign-in's
// provider pages (src/modules/sign-in/oidc-openapi.ts), webmentions (src/modules/webmention/openapi.ts). The tests check every REST answer against this same document.
import { buildOpenApi } from "../http/rest/openapi.js";
import { schema } from "./schema.js";
import { restRoutes } from "./route-table.js";
import { describeRestParameter } from "./rest-parameters.js";
import { portabilityPaths } from "./portability/openapi.js";
import { unsubscribePaths } from "./email/openapi.js";
import { feedPaths } from "./feeds/openapi.js";
import { indexablePaths } from "./indexable/openapi.js";
import { oidcSignInPaths } from "./sign-in/oidc-openapi.js";
import { passkeyPaths } from "./sign-in/passkey-openapi.js";
import { webmentionPaths } from "./webmention/openapi.js";

type OpenApiDocument = { paths: Record<string, unknown> } & Record<string, unknown>;

/** The last document built: a function of the version alone (the schema and the routes are the process's). */
let built: { version: string; document: OpenApiDocument } | undefined;

export function openApiDocument(version: string): OpenApiDocument {
  if (built?.version === version) return built.document;
  built = { version, document: buildDocument(version) };
  return built.document;
}

function buildDocument(version: string): OpenApiDocument {
  const document = buildOpenApi({ schema, routes: restRoutes, version, describeParameter: describeRestParameter }) as {
    paths: Record<string, unknown>;
  } & Record<string, unknown>;
  return {
    ...document,
    paths: {
      ...document.paths,
      ...portabilityPaths,
      ...unsubscribePaths,
      ...feedPaths,
      ...indexablePaths,
      ...oidcSignInPaths,
      ...passkeyPaths,
      ...webmentionPaths,
    },
  };
}
