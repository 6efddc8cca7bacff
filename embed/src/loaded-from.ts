// Where an embed script was loaded from: its origin (the default `api-base`) and the publishable key
// its script tag may carry once for the whole page (`data-publishable-key`). Read while the script
// runs: a classic script is document.currentScript; a module is found by its src.

export interface LoadedFrom {
  origin: string;
  publishableKey: string | null;
}

export function loadedFrom(file: string): LoadedFrom {
  const script =
    (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>(`script[src*="/embed/v1/${file}"]`);
  return {
    origin: script?.src ? new URL(script.src, location.href).origin : location.origin,
    publishableKey: script?.dataset.publishableKey ?? null,
  };
}
