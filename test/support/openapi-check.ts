// Every REST answer the suite sees is checked against the OpenAPI document the service serves
// (built here by the same function, src/modules/openapi-document.ts): the shared test client calls checkResponse.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { openApiDocument as serviceDocument } from "../../src/modules/openapi-document.js";

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: unknown;
};

let built: { doc: Doc; templates: { template: string; re: RegExp; params: number }[] } | undefined;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const compiled = new Map<string, ValidateFunction>();

function docOnce() {
  if (!built) {
    const doc = serviceDocument("test") as unknown as Doc;
    ajv.addSchema({ $id: "openapi", components: doc.components } as never);
    const templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        re: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params); // a static segment wins over a parameter (/discussions/counts)
    built = { doc, templates };
  }
  return built;
}

export function openApiDocument(): unknown {
  return docOnce().doc;
}

/** Throws when a documented route answers with a status or body its document does not describe. */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  const path = new URL(url, "http://x").pathname;
  if (!path.startsWith("/api/v1/") || path === "/api/v1/openapi.json" || status === 304) return;
  const { doc, templates } = docOnce();
  const match = templates.find((t) => t.re.test(path) && doc.paths[t.template]?.[method.toLowerCase()]);
  if (!match) return; // not a documented route (a test probing an unknown path or method)
  const op = doc.paths[match.template]![method.toLowerCase()]!;
  const documented = op.responses[String(status)];
  if (!documented) throw new Error(`OpenAPI: ${method} ${match.template} answered ${status}, which its document does not list`);
  const media = documented.content ? Object.keys(documented.content)[0] : undefined;
  if (!media) {
    if (body !== undefined && body !== "")
      throw new Error(`OpenAPI: ${method} ${match.template} ${status} has a body; its document says none`);
    return;
  }
  if (!contentType?.startsWith(media))
    throw new Error(`OpenAPI: ${method} ${match.template} ${status} is ${contentType}, documented ${media}`);
  const key = `${method} ${match.template} ${status}`;
  let validate = compiled.get(key);
  if (!validate) {
    const raw = JSON.stringify(documented.content![media]!.schema).replaceAll('"#/components/', '"openapi#/components/');
    validate = ajv.compile(JSON.parse(raw) as object);
    compiled.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(`OpenAPI: ${key} does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
  }
}
