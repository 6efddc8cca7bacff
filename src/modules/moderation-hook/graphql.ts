// The moderation hook's Send test (manage_settings): testSafetyHook.
import { builder } from "../../graphql/builder.js";
import { HOOK_DECISIONS } from "./caller.js";
import { testSafetyHook, type HookTestResult } from "./test-send.js";

const HookDecision = builder.enumType("ModerationHookDecision", { values: HOOK_DECISIONS });

const SafetyHookTest = builder.objectRef<HookTestResult>("SafetyHookTest").implement({
  description: "What the moderation hook answered a sample comment.check (marked test: true).",
  fields: (t) => ({
    ok: t.exposeBoolean("ok", { description: "The hook answered a decision." }),
    status: t.exposeInt("status", { nullable: true, description: "The HTTP status of its answer; null when none came." }),
    decision: t.expose("decision", { type: HookDecision, nullable: true }),
    reason: t.exposeString("reason", { nullable: true }),
    latencyMs: t.exposeInt("latencyMs"),
    error: t.exposeString("error", {
      nullable: true,
      description: "Why there is no decision: a timeout, a refused address, the network, an HTTP status or a malformed answer.",
    }),
  }),
});

builder.mutationField("testSafetyHook", (t) =>
  t.field({
    type: SafetyHookTest,
    description:
      "Sends a sample comment.check to the configured hook (past its breaker) and says what it answered. 409 hook_not_configured without one.",
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => testSafetyHook(ctx),
  }),
);
