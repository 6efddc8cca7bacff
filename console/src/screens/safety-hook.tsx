// The moderation hook's pieces on the Safety screen: "Send test" (testSafetyHook: a sample
// comment.check sent to the saved hook, and what it answered) and the hook's signing secret, shown once
// in the answer of the save that set the hook or changed its URL.
import { useState } from "preact/hooks";
import { gql } from "../api";
import { TestSafetyHookDocument, type TestSafetyHookMutation } from "../gql/graphql";
import { Copy, ErrorMessage, useAction } from "../ui";

type Answer = TestSafetyHookMutation["testSafetyHook"];

/** What the hook answered, in words. */
export function answerText(a: Answer, fallback: string): string {
  const http = a.status === null ? "no HTTP answer" : `HTTP ${a.status}`;
  const took = `${a.latencyMs.toLocaleString("en")} ms`;
  if (a.ok && a.decision) return `The hook answered “${a.decision}”${a.reason ? `: ${a.reason}` : ""} (${http}, ${took}).`;
  return `No decision: ${a.error ?? "the answer was not understood"} (${http}, ${took}). A comment would get the fallback: ${fallback}.`;
}

export function HookTest({ saved }: { saved: { url: string; onTimeout: string } | null }) {
  const action = useAction();
  const [answer, setAnswer] = useState<Answer | null>(null);
  return (
    <div class="hook-test">
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={!saved || action.busy}
          aria-describedby="hook-test-hint"
          onClick={() =>
            void action.run(async () => {
              setAnswer(null);
              setAnswer((await gql(TestSafetyHookDocument)).testSafetyHook);
            })
          }
        >
          {action.busy ? "Sending…" : "Send test"}
        </button>
        <span id="hook-test-hint" class="hint">
          {saved ? `Sends a sample comment, marked as a test, to the saved URL ${saved.url}.` : "Save a hook URL first."}
        </span>
      </div>
      <ErrorMessage error={action.error} />
      <div role="status" class={answer ? `hook-answer ${answer.ok ? "ok" : "failed"}` : undefined}>
        {answer && saved && answerText(answer, saved.onTimeout)}
      </div>
    </div>
  );
}

export function HookSecret({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label="The hook's signing secret">
      <h2>Hook signing secret</h2>
      <p class="warning">Copy it now: it is shown only this once.</p>
      <p>Your hook checks each request's signature with it (Standard Webhooks, like webhook endpoints).</p>
      <p>
        <code class="raw">{secret}</code> <Copy value={secret} />
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
