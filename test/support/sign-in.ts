// A guest of the service's hosted sign-in made as its guest form makes one (contract section 20): a
// challenge from GET /auth/v1/{tenantId}/challenge solved with altcha-lib's solver (as the ALTCHA
// widget solves it in the reader's browser), then POST /auth/v1/{tenantId}/guest. The tenant's
// signIn.methods must list guest.
import { solveChallenge } from "altcha-lib/v1";
import { expect } from "vitest";
import { client } from "./client.js";

export interface GuestSession {
  token: string;
  reader: { id: string; name: string; avatarUrl: string | null };
}

export async function signInGuest(serviceUrl: string, tenantId: string, name: string): Promise<GuestSession> {
  const auth = client(serviceUrl);
  const r = await auth.get(`/auth/v1/${tenantId}/challenge`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const c = r.body as { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
  const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  expect(solution).not.toBeNull();
  const altcha = Buffer.from(
    JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: solution!.number, salt: c.salt, signature: c.signature }),
  ).toString("base64");
  const guest = await auth.post(`/auth/v1/${tenantId}/guest`, { name, altcha });
  expect(guest.status, JSON.stringify(guest.body)).toBe(201);
  return guest.body as GuestSession;
}
