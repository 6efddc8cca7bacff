// A worker's loop: one pass every `pollMs` after the previous one ends (never two at once); `stop`
// cancels the next pass and waits for the one under way. A pass that fails is handed to `failed`
// and the loop goes on.

export interface PollLoop {
  start(): void;
  stop(): Promise<void>;
}

export function pollLoop(pass: () => Promise<unknown>, pollMs: number, failed: (err: unknown) => void): PollLoop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  const tick = () => {
    if (stopped) return;
    running = pass()
      .catch(failed)
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };

  return {
    start() {
      stopped = false;
      timer = setTimeout(tick, pollMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
