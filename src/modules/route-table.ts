// The REST route table (contract section 4): each route runs a GraphQL operation of the one schema.
import type { AnyRoute } from "../http/rest/router.js";
import { discussionRoutes } from "./discussions/routes.js";
import { commentRoutes } from "./comments/routes.js";
import { moderationRoutes } from "./moderation/routes.js";
import { keyRoutes } from "./keys/routes.js";
import { settingsRoutes } from "./settings/routes.js";
import { moderationHookRoutes } from "./moderation-hook/routes.js";
import { akismetRoutes } from "./akismet/routes.js";
import { alertRoutes } from "./alerts/routes.js";
import { identityRoutes } from "./identity/routes.js";
import { analyticsRoutes } from "./analytics/routes.js";
import { streamTicketRoutes } from "./streams/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";
import { auditRoutes } from "./audit/routes.js";
import { reportRoutes } from "./reports/routes.js";
import { readerRoutes } from "./readers/routes.js";
import { emailRoutes } from "./email/routes.js";
import { formattingRoutes } from "./formatting/routes.js";
import { recentRoutes } from "./recent/routes.js";
import { inboxRoutes } from "./inbox/routes.js";
import { followingRoutes } from "./following/routes.js";
import { meRoutes, signInProviderRoutes } from "./sign-in/routes.js";
import { federationRoutes } from "./federation/routes.js";
import { blueskyRoutes } from "./bluesky/routes.js";

export const restRoutes: AnyRoute[] = [
  ...discussionRoutes,
  ...federationRoutes,
  ...blueskyRoutes,
  ...recentRoutes,
  ...inboxRoutes,
  ...followingRoutes,
  ...commentRoutes,
  ...moderationRoutes,
  ...keyRoutes,
  ...settingsRoutes,
  ...moderationHookRoutes,
  ...akismetRoutes,
  ...alertRoutes,
  ...identityRoutes,
  ...analyticsRoutes,
  ...streamTicketRoutes,
  ...webhookRoutes,
  ...auditRoutes,
  ...reportRoutes,
  ...readerRoutes,
  ...meRoutes,
  ...signInProviderRoutes,
  ...emailRoutes,
  ...formattingRoutes,
];
