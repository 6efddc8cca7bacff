// The REST route table (contract section 4): each route runs a GraphQL operation of the one schema.
import type { AnyRoute } from "../router.js";
import { discussionRoutes } from "./discussions.js";

export const restRoutes: AnyRoute[] = [...discussionRoutes];
