// The whole schema: importing a type's module registers it on the builder.
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.js";
import "./discussion.js";
import "./comment.js";
import "./reaction.js";
import "./api-key.js";
import "./settings.js";
import "./analytics.js";
import "./stream.js";
import "./subscription.js";
import "./webhooks.js"; // webhooks (issue 4)

export const schema = lexicographicSortSchema(builder.toSchema());
