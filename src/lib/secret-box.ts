// AES-256-GCM for secrets the service must read back (identity secrets, webhook secrets).
// Key: SECRET_ENCRYPTION_KEY, else derived from ADMIN_JWT_SECRET with HKDF. A sealed value this key
// cannot open (sealed under another key) is a 503 `secret_key_mismatch`, reported once per value.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { errors } from "./errors.js";

export interface SecretBox {
  seal(plain: string): string;
  /**
   * The plain secret; throws `errors.secretKeyMismatch()` when the value was sealed under another key.
   * `remember: false` for values read once (stored answers), which would only crowd the cache.
   */
  open(sealed: string, opts?: { remember?: boolean }): string;
  /** Whether this key opens the sealed value (the start-up key check): nothing cached, nothing reported. */
  opens(sealed: string): boolean;
}

export interface SecretBoxOptions {
  /** a sealed value could not be opened (called once per value, up to a bound): log it for the operator */
  onUnreadable?: () => void;
}

const OPENED_MAX = 10_000;
const REPORTED_MAX = 1_000;

export function createSecretBox(keyMaterial: string, opts: SecretBoxOptions = {}): SecretBox {
  const key = Buffer.from(hkdfSync("sha256", keyMaterial, "engagement", "secret-box/v1", 32));
  // Opening is on hot paths (the identity secret of every request that names a reader, the signing
  // secret of every delivery): sealed value → plain secret, bounded. Secrets never change in place
  // (a new secret is a new sealed value), so nothing goes stale.
  const opened = new Map<string, string>();
  const reported = new Set<string>();
  const openOrRefuse = (sealed: string): string => {
    try {
      return decrypt(sealed);
    } catch {
      if (!reported.has(sealed)) {
        if (reported.size >= REPORTED_MAX) reported.clear();
        reported.add(sealed);
        opts.onUnreadable?.();
      }
      throw errors.secretKeyMismatch();
    }
  };
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", key, iv);
      const ct = Buffer.concat([c.update(plain, "utf8"), c.final()]);
      return `v1.${iv.toString("base64url")}.${ct.toString("base64url")}.${c.getAuthTag().toString("base64url")}`;
    },
    open(sealed, o) {
      if (o?.remember === false) return opened.get(sealed) ?? openOrRefuse(sealed);
      let plain = opened.get(sealed);
      if (plain === undefined) {
        plain = openOrRefuse(sealed);
        if (opened.size >= OPENED_MAX) opened.clear();
        opened.set(sealed, plain);
      }
      return plain;
    },
    opens(sealed) {
      try {
        decrypt(sealed);
        return true;
      } catch {
        return false;
      }
    },
  };

  function decrypt(sealed: string): string {
    const [v, iv, ct, tag] = sealed.split(".");
    if (v !== "v1" || !iv || !ct || !tag) throw new Error("Unrecognised sealed secret");
    const d = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    d.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([d.update(Buffer.from(ct, "base64url")), d.final()]).toString("utf8");
  }
}
