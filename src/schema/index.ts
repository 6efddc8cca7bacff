// The whole schema: importing a type's module registers it on the builder.
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.js";
import "./discussion.js";

export const schema = lexicographicSortSchema(builder.toSchema());
