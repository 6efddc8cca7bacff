// The pieces the settings screens' forms share: the service's problems by field, each shown beside
// its field, and a list of providers with its heading, its count and Add.
import type { ComponentChildren } from "preact";

/** The service's problems, by field path (`providers.0.issuer`). */
export type Errors = Record<string, string>;

/** The field's problem, if the answer named one; `idPrefix` + path is the id aria-describedby names. */
export function FieldError({ errors, path, idPrefix = "err-" }: { errors: Errors; path: string; idPrefix?: string }) {
  const msg = errors[path];
  return msg ? (
    <span class="field-error" id={`${idPrefix}${path}`}>
      {msg}
    </span>
  ) : null;
}

/** What a provider's fields in a ProviderList are given: the draft, its place and how to change it. */
export interface ProviderFieldsProps<D> {
  d: D;
  /** its place in the list, from 1 */
  n: number;
  errors: Errors;
  /** the path of its problems (`providers.0`) */
  prefix: string;
  onChange: (change: (d: D) => D) => void;
  onRemove: () => void;
}

/**
 * A settings list of providers: its heading, the problem with the list as a whole (`path`), a line
 * when it is empty, each draft's fields (`children`, given what ProviderFieldsProps names) and Add
 * (a `blank` draft), disabled at `max`, with the count.
 */
export function ProviderList<D extends { key: number }>({
  title,
  titleId,
  countId,
  path,
  errors,
  drafts,
  setDrafts,
  blank,
  max,
  empty,
  message,
  children,
}: {
  /** the list's heading: its setting's label */
  title: string;
  titleId: string;
  countId: string;
  path: string;
  errors: Errors;
  drafts: D[];
  setDrafts: (change: (all: D[]) => D[]) => void;
  blank: () => D;
  max: number;
  empty: ComponentChildren;
  /** what the form says as a whole, under the heading */
  message?: ComponentChildren;
  children: (props: ProviderFieldsProps<D> & { key: number }) => ComponentChildren;
}) {
  const count = drafts.length;
  return (
    <>
      <h2 id={titleId}>{title}</h2>
      {message}
      <FieldError errors={errors} path={path} />
      {count === 0 && <p>{empty}</p>}
      {drafts.map((d, i) =>
        children({
          key: d.key,
          d,
          n: i + 1,
          errors,
          prefix: `${path}.${i}`,
          onChange: (change) => setDrafts((all) => all.map((x) => (x.key === d.key ? change(x) : x))),
          onRemove: () => setDrafts((all) => all.filter((x) => x.key !== d.key)),
        }),
      )}
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={count >= max}
          aria-describedby={countId}
          onClick={() => setDrafts((all) => [...all, blank()])}
        >
          Add a provider
        </button>
        <span id={countId} class="hint">
          {count} of {max} providers
        </span>
      </div>
    </>
  );
}
