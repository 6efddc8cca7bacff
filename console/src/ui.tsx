// Small shared pieces: loading data, showing errors, labelled fields.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api";

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return "Something went wrong. Try again.";
}

/** Loads on mount and on `reload()`; keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const reload = useCallback(() => {
    setLoading(true);
    load()
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => setError(messageOf(e)))
      .finally(() => setLoading(false));
  }, deps);
  useEffect(reload, [reload]);
  return { data, error, loading, reload, setData };
}

export function ErrorMessage({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** Runs an action, keeping its error and busy state for the control that started it. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(messageOf(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

export function Copy({ value, label = "Copy" }: { value: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(
          () => setDone(true),
          () => setDone(false),
        );
      }}
    >
      {done ? "Copied" : label}
    </button>
  );
}

/** Forward paging over a Relay connection: the cursor of the page shown and the way back. */
export function usePages() {
  const [cursor, setCursor] = useState<string | null>(null);
  const [back, setBack] = useState<(string | null)[]>([]);
  return {
    cursor,
    reset: () => {
      setCursor(null);
      setBack([]);
    },
    pager: (pageInfo: { hasNextPage: boolean; endCursor?: string | null } | undefined) => (
      <div class="actions">
        {back.length > 0 && (
          <button
            type="button"
            onClick={() => {
              setCursor(back[back.length - 1] ?? null);
              setBack(back.slice(0, -1));
            }}
          >
            Previous page
          </button>
        )}
        {pageInfo?.hasNextPage && (
          <button
            type="button"
            onClick={() => {
              setBack([...back, cursor]);
              setCursor(pageInfo.endCursor ?? null);
            }}
          >
            Next page
          </button>
        )}
      </div>
    ),
  };
}
