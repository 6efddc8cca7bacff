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

export function openApiDocument(version: string): { paths: Record<string, unknown> } & Record<string, unknown> {
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
