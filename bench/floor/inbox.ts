// The inbox floor: a minimal hand-written ActivityPub inbox to measure the service's against in the
// same run (npm run bench:inbox). Per POST: read the body, parse it as JSON, check its Digest and its
// draft-cavage HTTP signature (rsa-sha256) against the one sender's public key, held in memory, store
// the activity as one row (its id unique, a replay stored once), answer 202. No key fetch, no
// blocklists, no rate limits, no JSON-LD, no group commit: the least durable work an inbox can do.
// Env: DATABASE_URL, PORT, PUBLIC_KEY_PEM, POOL (10, the service's default pool).
// Prints `listening` once it serves.
import { createHash, createPublicKey, verify } from "node:crypto";
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL ?? 10),
  application_name: "eng-floor",
});
const key = createPublicKey(process.env.PUBLIC_KEY_PEM!);

await pool.query(
  `CREATE TABLE IF NOT EXISTS floor_inbox (activity_id text PRIMARY KEY, activity jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`,
);

/** The draft-cavage signature's parameters (keyId, headers, signature). */
function signatureParams(header: string): Map<string, string> {
  return new Map([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

function verified(req: http.IncomingMessage, body: Buffer): boolean {
  const sig = signatureParams(String(req.headers.signature ?? ""));
  const digest = `SHA-256=${createHash("sha256").update(body).digest("base64")}`;
  if (req.headers.digest !== digest) return false;
  const lines = (sig.get("headers") ?? "date")
    .split(" ")
    .map((h) =>
      h === "(request-target)" ? `(request-target): ${req.method!.toLowerCase()} ${req.url}` : `${h}: ${String(req.headers[h] ?? "")}`,
    );
  return verify("sha256", Buffer.from(lines.join("\n")), key, Buffer.from(sig.get("signature") ?? "", "base64"));
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    let activity: { id?: unknown };
    try {
      activity = JSON.parse(body.toString("utf8"));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!verified(req, body) || typeof activity.id !== "string") {
      res.writeHead(401).end();
      return;
    }
    pool
      .query(`INSERT INTO floor_inbox (activity_id, activity) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [activity.id, body.toString("utf8")])
      .then(
        () => res.writeHead(202).end(),
        () => res.writeHead(500).end(),
      );
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
