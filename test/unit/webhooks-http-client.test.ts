import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError, createWebhookHttpClient, type WebhookHttpClient } from "../../src/outbound/http-client.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let port: number;
const seen: Seen[] = [];
let bigChunksSent = 0;
let bigClosedEarly: boolean | null = null;

function handler(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
  seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
  switch (req.url) {
    case "/ok":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ received: body.length }));
      return;
    case "/fail":
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("boom");
      return;
    case "/redirect":
      res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` });
      res.end();
      return;
    case "/slow":
      setTimeout(() => {
        if (!res.destroyed) res.end("late");
      }, 2_000);
      return;
    case "/big-chunked": {
      res.writeHead(200, { "content-type": "text/plain" });
      res.on("close", () => {
        bigClosedEarly = !res.writableFinished;
      });
      const chunk = "x".repeat(16 * 1024);
      let sent = 0;
      const pump = () => {
        // keeps streaming up to 10 MiB unless the client goes away
        while (sent < 640 && !res.destroyed) {
          sent++;
          bigChunksSent = sent;
          if (!res.write(chunk)) {
            res.once("drain", pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
      return;
    }
    case "/big-declared":
      res.writeHead(200, { "content-length": String(1024 * 1024) });
      res.write("y".repeat(1024));
      return; // never finishes: the client must bail out on the header alone
    case "/exact":
      res.writeHead(200);
      res.end("z".repeat(1024));
      return;
    default:
      res.writeHead(404);
      res.end();
  }
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handler(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const devClient = (): WebhookHttpClient => createWebhookHttpClient({ allowHttpLoopback: true, allowList: [], maxResponseBytes: 1024 });

async function expectDeliveryError(p: Promise<unknown>, kind: DeliveryError["kind"]): Promise<DeliveryError> {
  const err = await p.then(
    () => {
      throw new Error("expected a DeliveryError");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  const de = err as DeliveryError;
  expect(de.kind).toBe(kind);
  return de;
}

describe("webhook http client", () => {
  it("POSTs the body and headers and returns 200", async () => {
    const client = devClient();
    try {
      const body = JSON.stringify({ hello: "wörld" });
      const res = await client.post({
        url: `http://127.0.0.1:${port}/ok`,
        headers: { "content-type": "application/json", "x-service-event": "comment_created" },
        body,
        timeoutMs: 5_000,
      });
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ received: body.length });
      expect(res.headers["content-type"]).toBe("application/json");
      expect(res.durationMs).toBeGreaterThanOrEqual(0);
      const last = seen.at(-1);
      expect(last?.method).toBe("POST");
      expect(last?.body).toBe(body);
      expect(last?.headers["x-service-event"]).toBe("comment_created");
      expect(last?.headers["user-agent"]).toMatch(/^engagement-service-webhooks/);
    } finally {
      client.close();
    }
  });

  it("returns a 500 as a status, without throwing or retrying", async () => {
    const client = devClient();
    try {
      const before = seen.length;
      const res = await client.post({ url: `http://127.0.0.1:${port}/fail`, headers: {}, body: "{}", timeoutMs: 5_000 });
      expect(res.statusCode).toBe(500);
      expect(res.body).toBe("boom");
      expect(seen.length - before).toBe(1);
    } finally {
      client.close();
    }
  });

  it("does not follow redirects", async () => {
    const client = devClient();
    try {
      const before = seen.length;
      const res = await client.post({
        url: `http://127.0.0.1:${port}/redirect`,
        headers: {},
        body: "{}",
        timeoutMs: 5_000,
      });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toContain("/ok");
      expect(seen.slice(before).map((s) => s.url)).toEqual(["/redirect"]);
    } finally {
      client.close();
    }
  });

  it("times out a slow receiver", async () => {
    const client = devClient();
    try {
      const started = Date.now();
      const err = await expectDeliveryError(
        client.post({ url: `http://127.0.0.1:${port}/slow`, headers: {}, body: "{}", timeoutMs: 150 }),
        "timeout",
      );
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(err.durationMs).toBeGreaterThanOrEqual(100);
    } finally {
      client.close();
    }
  });

  it("aborts via the caller's signal", async () => {
    const client = devClient();
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      await expectDeliveryError(
        client.post({ url: `http://127.0.0.1:${port}/slow`, headers: {}, body: "{}", timeoutMs: 5_000, signal: ac.signal }),
        "network",
      );
    } finally {
      client.close();
    }
  });

  it("cuts off an oversized streamed response", async () => {
    const client = devClient();
    try {
      const err = await expectDeliveryError(
        client.post({ url: `http://127.0.0.1:${port}/big-chunked`, headers: {}, body: "{}", timeoutMs: 5_000 }),
        "response_too_large",
      );
      expect(err.statusCode).toBe(200);
      // the client hung up before the server's 10 MiB were written
      await expect.poll(() => bigClosedEarly, { timeout: 5_000, interval: 20 }).not.toBeNull(); // the server saw the hang-up
      expect(bigClosedEarly).toBe(true);
      expect(bigChunksSent).toBeLessThan(640);
    } finally {
      client.close();
    }
  });

  it("refuses a response whose Content-Length exceeds the cap", async () => {
    const client = devClient();
    try {
      const started = Date.now();
      const err = await expectDeliveryError(
        client.post({ url: `http://127.0.0.1:${port}/big-declared`, headers: {}, body: "{}", timeoutMs: 5_000 }),
        "response_too_large",
      );
      expect(err.statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      client.close();
    }
  });

  it("accepts a body of exactly the cap", async () => {
    const client = devClient();
    try {
      const res = await client.post({ url: `http://127.0.0.1:${port}/exact`, headers: {}, body: "{}", timeoutMs: 5_000 });
      expect(res.body.length).toBe(1024);
    } finally {
      client.close();
    }
  });

  it("reports connection failures as network errors", async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const client = devClient();
    try {
      const err = await expectDeliveryError(
        client.post({ url: `http://127.0.0.1:${closedPort}/`, headers: {}, body: "{}", timeoutMs: 5_000 }),
        "network",
      );
      expect(err.message).toContain("ECONNREFUSED");
    } finally {
      client.close();
    }
  });

  describe("address policy", () => {
    const prodClient = () => createWebhookHttpClient({ allowHttpLoopback: false, allowList: [] });

    it("refuses loopback literals when allowHttpLoopback is false (nothing is sent)", async () => {
      const client = prodClient();
      try {
        const before = seen.length;
        await expectDeliveryError(
          client.post({ url: `http://127.0.0.1:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 }),
          "blocked_address",
        );
        await expectDeliveryError(
          client.post({ url: `https://127.0.0.1:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 }),
          "blocked_address",
        );
        await expectDeliveryError(
          client.post({ url: `https://[::ffff:127.0.0.1]:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 }),
          "blocked_address",
        );
        expect(seen.length).toBe(before);
      } finally {
        client.close();
      }
    });

    it("checks the resolved address at connect time (real DNS for localhost)", async () => {
      const client = prodClient();
      try {
        const before = seen.length;
        const err = await expectDeliveryError(
          client.post({ url: `https://localhost:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 }),
          "blocked_address",
        );
        expect(err.message).toMatch(/loopback/);
        expect(seen.length).toBe(before);
      } finally {
        client.close();
      }
    });

    it("catches DNS rebinding: a name that now resolves to a private address", async () => {
      let answer = "127.0.0.1";
      const client = createWebhookHttpClient({
        allowHttpLoopback: true,
        allowList: [],
        lookup: async () => [{ address: answer, family: 4 }],
      });
      try {
        // http to a non-"localhost" name is refused by the scheme rule; use the loopback name with
        // a lookup that changes its answer between requests.
        const ok = await client.post({ url: `http://localhost:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 });
        expect(ok.statusCode).toBe(200);
        client.close(); // drop the keep-alive socket so the next request resolves again
        answer = "10.0.0.7";
        const before = seen.length;
        const err = await expectDeliveryError(
          client.post({ url: `http://localhost:${port}/ok`, headers: {}, body: "{}", timeoutMs: 2_000 }),
          "blocked_address",
        );
        expect(err.message).toContain("10.0.0.7");
        expect(seen.length).toBe(before);
      } finally {
        client.close();
      }
    });

    it("refuses other schemes, credentials and malformed URLs", async () => {
      const client = devClient();
      try {
        for (const url of ["ftp://127.0.0.1/", `http://u:p@127.0.0.1:${port}/ok`, "nope", "http://example.com/"]) {
          await expectDeliveryError(client.post({ url, headers: {}, body: "{}", timeoutMs: 1_000 }), "blocked_address");
        }
      } finally {
        client.close();
      }
    });
  });
});
