// The whole schema: importing a type's module registers it on the builder.
import { lexicographicSortSchema } from "graphql";
import { builder } from "../graphql/builder.js";
import "./discussions/graphql.js";
import "./comments/graphql.js";
import "./moderation/graphql.js";
import "./reactions/graphql.js";
import "./votes/graphql.js";
import "./keys/graphql.js";
import "./settings/graphql.js";
import "./moderation-hook/graphql.js";
import "./identity/graphql.js";
import "./analytics/graphql.js";
import "./streams/graphql.js";
import "./streams/subscription.js";
import "./webhooks/graphql.js";
import "./audit/graphql.js";
import "./reports/graphql.js";
import "./readers/graphql.js";
import "./email/graphql.js";
import "./formatting/graphql.js";
import "./recent/graphql.js";
import "./inbox/graphql.js";
import "./following/graphql.js";
import "./inbox/subscription.js";
import "./sign-in/graphql.js";
import "./node.js";

export const schema = lexicographicSortSchema(builder.toSchema());
