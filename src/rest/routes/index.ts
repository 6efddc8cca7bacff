// The REST route table (contract section 4): each route runs a GraphQL operation of the one schema.
import type { AnyRoute } from "../router.js";
import { discussionRoutes } from "./discussions.js";
import { commentRoutes } from "./comments.js";
import { keyRoutes } from "./keys.js";
import { settingsRoutes } from "./settings.js";
import { analyticsRoutes } from "./analytics.js";
import { streamTicketRoutes } from "./stream-ticket.js";
import { webhookRoutes } from "./webhooks.js"; // webhooks (issue 4)

export const restRoutes: AnyRoute[] = [...discussionRoutes, ...commentRoutes, ...keyRoutes, ...settingsRoutes, ...analyticsRoutes, ...streamTicketRoutes, ...webhookRoutes];
