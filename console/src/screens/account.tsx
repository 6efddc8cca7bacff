// Your account (#/account, "Your account" beside Sign out; every operator, owner or moderator): who is
// signed in, to which tenant, and their passkeys (contract section 29; console/src/passkeys.ts) —
// each with its label, when it was added and last used, and "Remove"; "Add a passkey" (an optional
// name first) asks the browser to make one, which then signs this operator in on the sign-in page.
import { useState } from "preact/hooks";
import { when, type Session } from "../api";
import { addPasskey, listPasskeys, passkeysSupported, removePasskey } from "../passkeys";
import { ErrorMessage, Notice, useAction, useLoad } from "../ui";

export function AccountScreen({ session }: { session: Session }) {
  const passkeys = useLoad(listPasskeys);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const supported = passkeysSupported();
  const rows = passkeys.data ?? [];

  const add = (form: HTMLFormElement) => {
    const label = String(new FormData(form).get("label") ?? "");
    setDone(null);
    void action.run(async () => {
      const made = await addPasskey(label);
      form.reset();
      setDone(`Passkey added: ${made.label}. It signs you in on the sign-in page ("Sign in with a passkey").`);
      passkeys.reload();
    });
  };
  const remove = (id: string, label: string) => {
    setDone(null);
    void action.run(async () => {
      await removePasskey(id);
      setDone(`Passkey removed: ${label}. It no longer signs you in.`);
      passkeys.reload();
    });
  };

  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Your account</h1>
      <dl class="summary facts" aria-label="Who is signed in">
        <dt>Email</dt>
        <dd>{session.operator.email}</dd>
        <dt>Role</dt>
        <dd>{session.operator.role}</dd>
        <dt>Tenant</dt>
        <dd>
          {session.tenantName || session.tenantId} <span class="muted">({session.tenantId})</span>
        </dd>
      </dl>

      <h2 id="passkeys-title">Passkeys</h2>
      <p class="hint" id="passkeys-hint">
        A passkey signs you in to this console instead of a console link or a password: your device keeps it and unlocks it with your
        fingerprint, face or screen lock. It is for this account on this service's address only; the service keeps its public key, never a
        secret.
      </p>
      <ErrorMessage error={passkeys.error ?? action.error} />
      {done && <Notice>{done}</Notice>}
      {passkeys.data && rows.length === 0 && <p>You have no passkey yet.</p>}
      {rows.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="passkeys-title">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <tr key={p.id}>
                  <td>{p.label}</td>
                  <td>{when(p.createdAt)}</td>
                  <td>{p.lastUsedAt ? when(p.lastUsedAt) : "Never"}</td>
                  <td>
                    <button type="button" aria-label={`Remove ${p.label}`} disabled={action.busy} onClick={() => remove(p.id, p.label)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form
        class="inline passkey-add"
        onSubmit={(e) => {
          e.preventDefault();
          add(e.currentTarget);
        }}
      >
        <label>
          Name (optional)
          <input name="label" maxLength={60} placeholder="Work laptop" autoComplete="off" />
        </label>
        <button type="submit" disabled={!supported || action.busy} aria-describedby="passkeys-hint">
          Add a passkey
        </button>
      </form>
      {!supported && <p class="hint">This browser cannot make passkeys.</p>}
    </section>
  );
}
