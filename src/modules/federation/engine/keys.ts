// The tenant's actor's key pairs (contract section 24): an RSA key (RSASSA-PKCS1-v1_5 with SHA-256,
// 2048 bits: the HTTP signatures Mastodon verifies, and the size Mastodon and GoToSocial make theirs)
// and an Ed25519 key (Object Integrity Proofs, published under `assertionMethod`). Made the first time
// the actor is needed (the RSA key here, the Ed25519 key by Fedify's generateCryptoKeyPair; Fedify's
// RSA keys are 4,096 bits, which cost each delivery's signature about 5× the CPU: docs/fediverse.md)
// and kept in federation_actors: the public halves as JWK, the private halves sealed by the secret box
// (src/lib/secret-box.ts) as every secret the service stores. The delivery composer signs any tenant's
// jobs: each tenant's keys are read and written through that tenant's store.
import { exportJwk, generateCryptoKeyPair, importJwk } from "@fedify/fedify";
import type { TenantStore } from "../../../db/tenant-store.js";
import type { SecretBox } from "../../../lib/secret-box.js";

export interface ActorKeys {
  rsa: CryptoKeyPair;
  ed25519: CryptoKeyPair;
}

interface KeyRow {
  rsaPublicJwk: JsonWebKey;
  rsaPrivateEnc: string;
  edPublicJwk: JsonWebKey;
  edPrivateEnc: string;
}

const SELECT = `SELECT rsa_public_jwk AS "rsaPublicJwk", rsa_private_enc AS "rsaPrivateEnc",
                       ed_public_jwk AS "edPublicJwk", ed_private_enc AS "edPrivateEnc"
                  FROM federation_actors WHERE tenant_id = $1`;

/** An RSASSA-PKCS1-v1_5 (SHA-256) key pair of 2,048 bits, extractable (its private half is sealed and stored). */
function generateRsaKeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
}

async function pairOf(publicJwk: JsonWebKey, privateSealed: string, box: SecretBox): Promise<CryptoKeyPair> {
  const privateJwk = JSON.parse(box.open(privateSealed)) as JsonWebKey;
  return { publicKey: await importJwk(publicJwk, "public"), privateKey: await importJwk(privateJwk, "private") };
}

export interface KeyStore {
  /** The tenant's keys, made and stored on first use (two instances racing keep the first row written). */
  keysOf(tenantId: string): Promise<ActorKeys>;
}

export function createKeyStore(deps: { stores: (tenantId: string) => Pick<TenantStore, "sql">; secretBox: SecretBox }): KeyStore {
  // imported keys per tenant, in process (keys never change in place)
  const cache = new Map<string, Promise<ActorKeys>>();
  const read = async (tenantId: string): Promise<ActorKeys> => {
    const sql = deps.stores(tenantId).sql;
    let [row] = await sql.query<KeyRow>(SELECT, [], "eng_federation_keys");
    if (!row) {
      const rsa = await generateRsaKeyPair();
      const ed = await generateCryptoKeyPair("Ed25519");
      const seal = async (k: CryptoKey) => deps.secretBox.seal(JSON.stringify(await exportJwk(k)));
      await sql.query(
        `INSERT INTO federation_actors (tenant_id, rsa_public_jwk, rsa_private_enc, ed_public_jwk, ed_private_enc)
         VALUES ($1, $2::jsonb, $3, $4::jsonb, $5) ON CONFLICT (tenant_id) DO NOTHING`,
        [
          JSON.stringify(await exportJwk(rsa.publicKey)),
          await seal(rsa.privateKey),
          JSON.stringify(await exportJwk(ed.publicKey)),
          await seal(ed.privateKey),
        ],
      );
      [row] = await sql.query<KeyRow>(SELECT, [], "eng_federation_keys");
      if (!row) throw new Error(`the actor keys of tenant ${tenantId} were not stored`);
    }
    return {
      rsa: await pairOf(row.rsaPublicJwk, row.rsaPrivateEnc, deps.secretBox),
      ed25519: await pairOf(row.edPublicJwk, row.edPrivateEnc, deps.secretBox),
    };
  };
  return {
    keysOf(tenantId) {
      let p = cache.get(tenantId);
      if (!p) {
        if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
        p = read(tenantId);
        cache.set(tenantId, p);
        p.catch(() => cache.delete(tenantId));
      }
      return p;
    },
  };
}
