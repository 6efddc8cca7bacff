// SHA-256 in one call (crypto.hash): no Hash object per digest, which showed on the hot paths
// (every API-key lookup hashes the key, every comment list its cursor tag).
import { hash } from "node:crypto";

export function sha256(data: string, encoding: "hex" | "base64url"): string;
export function sha256(data: string, encoding: "buffer"): Buffer;
export function sha256(data: string, encoding: "hex" | "base64url" | "buffer"): string | Buffer {
  return hash("sha256", data, encoding);
}
