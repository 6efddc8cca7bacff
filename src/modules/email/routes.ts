// REST routes of email (contract section 15): the reader's own preferences, and a test email.
import { bodyObject, route } from "../../http/rest/router.js";
import { RestMyNotificationsDocument, RestSendTestEmailDocument, RestUpdateMyNotificationsDocument } from "../../generated/operations.js";

export const emailRoutes = [
  route({
    method: "GET",
    path: "/me/notifications",
    identity: "required",
    document: RestMyNotificationsDocument,
    variables: () => ({}),
    respond: (d) => d.myNotifications,
  }),
  route({
    method: "PATCH",
    path: "/me/notifications",
    identity: "required",
    document: RestUpdateMyNotificationsDocument,
    variables: ({ body }) => ({ input: bodyObject(body) }),
    respond: (d) => d.updateMyNotifications,
  }),
  route({
    method: "POST",
    path: "/settings/email/test",
    document: RestSendTestEmailDocument,
    variables: ({ body }) => {
      const { to } = bodyObject(body, ["to"]);
      return { to: typeof to === "string" ? to : "" };
    },
    respond: (d) => d.sendTestEmail,
  }),
];
