// GraphQL's types as JSON Schema, for the OpenAPI document (openapi.ts): an input type (a request
// body, a parameter), an operation's selection set over the output types (a response), and the
// shapes a route's `response` reshaping works with.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";

export type JsonSchema = Record<string, unknown>;

/** Known shapes of JSON scalar fields, by `Type.field`; any other JSON field is any JSON. */
const JSON_FIELDS: Record<string, JsonSchema> = {
  "Comment.reactionMap": { type: "object", additionalProperties: { type: "integer", minimum: 1 } },
  "ReactionToggle.countMap": { type: "object", additionalProperties: { type: "integer", minimum: 1 } },
  "WebhookEndpoint.delivery": { type: "object", additionalProperties: { type: "integer" } },
  "AnalyticsTotals.reactions": { type: "object", additionalProperties: { type: "integer" } },
  "AnalyticsBucket.reactions": { type: "object", additionalProperties: { type: "integer" } },
  "AuditEntry.details": { type: ["object", "null"] },
  "ReportedComment.reasons": {
    type: "object",
    properties: Object.fromEntries(["spam", "abuse", "off_topic", "other"].map((r) => [r, { type: "integer", minimum: 1 }])),
    additionalProperties: false,
  },
  "Comment.moderationReason": {
    type: "object",
    properties: {
      source: { type: "string", enum: ["rule", "new_reader", "moderator", "reports", "hook", "akismet", "trust", "shadow_ban"] },
    },
    required: ["source"],
  },
};

function scalarSchema(name: string): JsonSchema {
  switch (name) {
    case "Int":
      return { type: "integer" };
    case "Float":
      return { type: "number" };
    case "Boolean":
      return { type: "boolean" };
    case "DateTime":
      return { type: "string", format: "date-time" };
    case "JSON":
      return {};
    default:
      return { type: "string" };
  }
}

const nullable = (s: JsonSchema): JsonSchema => {
  // a nullable enum lists null among its values too (JSON Schema checks `enum` besides `type`)
  if (typeof s.type === "string")
    return { ...s, type: [s.type, "null"], ...(Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {}) };
  if (s.$ref) return { anyOf: [s, { type: "null" }] };
  if (Object.keys(s).length === 0) return s;
  return { anyOf: [s, { type: "null" }] };
};

/** An input type as JSON Schema (request bodies and query parameters). */
export function inputSchema(type: GraphQLInputType): JsonSchema {
  const required = isNonNullType(type);
  const t = getNullableType(type) as GraphQLInputType;
  let s: JsonSchema;
  if (isListType(t)) s = { type: "array", items: inputSchema(t.ofType as GraphQLInputType) };
  else if (isInputObjectType(t)) {
    const fields = t.getFields();
    s = {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(
        Object.values(fields).map((f) => [f.name, { ...inputSchema(f.type), ...(f.description ? { description: f.description } : {}) }]),
      ),
      required: Object.values(fields)
        .filter((f) => isNonNullType(f.type) && f.defaultValue === undefined)
        .map((f) => f.name),
    };
    if ((s.required as string[]).length === 0) delete s.required;
  } else if (isEnumType(t)) s = { type: "string", enum: t.getValues().map((v) => v.value as string) };
  else s = scalarSchema(getNamedType(t).name);
  return required ? s : nullable(s);
}

/** A selection set over an output type as JSON Schema: exactly the fields (and aliases) selected. */
export function selectionSchema(
  type: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
  parentField?: string,
): JsonSchema {
  const nonNull = isNonNullType(type);
  const t = getNullableType(type) as GraphQLOutputType;
  let s: JsonSchema;
  if (isListType(t))
    s = { type: "array", items: selectionSchema(t.ofType as GraphQLOutputType, selection, fragments, schema, parentField) };
  else if (isObjectType(t) || isInterfaceType(t) || isUnionType(t)) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const visit = (set: SelectionSetNode, on: GraphQLOutputType) => {
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) addField(sel, on);
        else if (sel.kind === Kind.INLINE_FRAGMENT)
          visit(sel.selectionSet, sel.typeCondition ? (schema.getType(sel.typeCondition.name.value) as GraphQLOutputType) : on);
        else {
          const f = fragments.get(sel.name.value);
          if (f) visit(f.selectionSet, schema.getType(f.typeCondition.name.value) as GraphQLOutputType);
        }
      }
    };
    const addField = (node: FieldNode, on: GraphQLOutputType) => {
      const key = node.alias?.value ?? node.name.value;
      if (node.name.value === "__typename") {
        properties[key] = { type: "string" };
        required.push(key);
        return;
      }
      const owner = getNamedType(on);
      if (!isObjectType(owner) && !isInterfaceType(owner)) return;
      const field = owner.getFields()[node.name.value];
      if (!field) return;
      const known = JSON_FIELDS[`${owner.name}.${field.name}`];
      const fieldSchema = known
        ? isNonNullType(field.type)
          ? known
          : nullable(known)
        : selectionSchema(field.type, node.selectionSet, fragments, schema, `${owner.name}.${field.name}`);
      properties[key] = field.description ? { ...fieldSchema, description: field.description } : fieldSchema;
      // nullable fields may also be left out (REST omits some, e.g. a verification's `error`)
      if (isNonNullType(field.type)) required.push(key);
    };
    if (selection) visit(selection, t);
    s = { type: "object", properties, ...(required.length ? { required } : {}) };
  } else if (isEnumType(t)) s = { type: "string", enum: t.getValues().map((v) => v.value as string) };
  else if (isScalarType(t)) s = (parentField ? JSON_FIELDS[parentField] : undefined) ?? scalarSchema(t.name);
  else s = {};
  return nonNull ? s : nullable(s);
}

/** What a route's `response` reshaping works with: the schema of any path of the operation's result. */
export interface ResponseShapes {
  /** the schema at a dotted path of the result, e.g. "createApiKey.apiKey" or "discussionCounts.comments" (through lists) */
  at(path: string): JsonSchema;
  /** an object with these properties, all required */
  object(props: Record<string, JsonSchema>, optional?: string[]): JsonSchema;
  /** the properties of several object schemas as one (later ones win) */
  merge(...objects: JsonSchema[]): JsonSchema;
  /** a map (JSON object) whose values have this schema */
  map(values: JsonSchema): JsonSchema;
}

export function shapesFor(result: JsonSchema): ResponseShapes {
  const at = (path: string): JsonSchema => {
    let s: JsonSchema = result;
    for (const key of path.split(".")) {
      while (s.type === "array" || (Array.isArray(s.type) && s.type.includes("array"))) s = s.items as JsonSchema;
      if (s.anyOf) s = (s.anyOf as JsonSchema[])[0]!;
      const next = (s.properties as Record<string, JsonSchema> | undefined)?.[key];
      if (!next) throw new Error(`openapi: no field ${path} in the operation's result`);
      s = next;
    }
    return s;
  };
  return {
    at,
    object: (props, optional = []) => ({
      type: "object",
      properties: props,
      required: Object.keys(props).filter((k) => !optional.includes(k)),
    }),
    merge: (...objects) => ({
      type: "object",
      properties: Object.assign({}, ...objects.map((o) => o.properties)),
      required: [...new Set(objects.flatMap((o) => (o.required as string[] | undefined) ?? []))],
    }),
    map: (values) => ({ type: "object", additionalProperties: values }),
  };
}
