// A plain OAuth 2 server shaped like GitHub's (no discovery, no ID token), on loopback, for the hosted
// sign-in's tests: GET /login/oauth/authorize approves at once (or, with `deny`, sends the reader back
// with error=access_denied, as GitHub does when they cancel) and redirects to the redirect_uri with
// `code` and `state`; POST /login/oauth/access_token takes client_id, client_secret (in the form, as
// GitHub wants), code, redirect_uri and the PKCE code_verifier (S256), and answers JSON when asked
// with Accept: application/json (a form otherwise, as GitHub does), an error as 200 {"error"} like
// GitHub's; GET /user with `Authorization: Bearer` answers {id, login, name, avatar_url, email}.
// Each token request is recorded, so a test can see how the client authenticated.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  email: string | null;
}

export interface TokenRequest {
  authorization: string | undefined;
  accept: string | undefined;
  form: Record<string, string>;
}

export interface TestGithub {
  url: string;
  /** send the next readers back with error=access_denied */
  deny: boolean;
  /** the token endpoint's requests, in order */
  readonly tokenRequests: TokenRequest[];
  /** how many times /user was asked */
  readonly userRequests: number;
  close(): Promise<void>;
}

interface Grant {
  redirectUri: string;
  challenge: string | null;
  used: boolean;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

export async function startTestGithub(opts: { clientId: string; clientSecret: string; user: GithubUser }): Promise<TestGithub> {
  const grants = new Map<string, Grant>();
  const tokens = new Set<string>();
  const tokenRequests: TokenRequest[] = [];
  let userRequests = 0;
  const state = { deny: false };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));

    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      const q = url.searchParams;
      const redirectUri = q.get("redirect_uri");
      if (q.get("client_id") !== opts.clientId || !redirectUri) return void res.writeHead(404).end("unknown client");
      const back = new URL(redirectUri);
      if (state.deny) {
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("error_description", "The user has denied your application access.");
      } else {
        const code = randomBytes(10).toString("hex");
        const method = q.get("code_challenge_method");
        if (q.get("code_challenge") && method !== "S256") return void res.writeHead(400).end("S256 only");
        grants.set(code, { redirectUri, challenge: q.get("code_challenge"), used: false });
        back.searchParams.set("code", code);
      }
      if (q.get("state")) back.searchParams.set("state", q.get("state")!);
      return void res.writeHead(302, { location: back.href }).end();
    }

    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      void readBody(req).then((text) => {
        const form = Object.fromEntries(new URLSearchParams(text));
        tokenRequests.push({ authorization: req.headers.authorization, accept: req.headers.accept, form });
        const answer = (body: Record<string, string>) =>
          req.headers.accept?.includes("application/json")
            ? json(200, body)
            : void res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" }).end(new URLSearchParams(body).toString());
        if (form.client_id !== opts.clientId || form.client_secret !== opts.clientSecret) {
          return answer({
            error: "incorrect_client_credentials",
            error_description: "The client_id and/or client_secret passed are incorrect.",
          });
        }
        const grant = form.code ? grants.get(form.code) : undefined;
        const verified =
          grant?.challenge === null ||
          (grant !== undefined &&
            form.code_verifier !== undefined &&
            createHash("sha256").update(form.code_verifier).digest("base64url") === grant.challenge);
        if (!grant || grant.used || grant.redirectUri !== form.redirect_uri || !verified) {
          return answer({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
        }
        grant.used = true;
        const token = `gho_${randomBytes(18).toString("hex")}`;
        tokens.add(token);
        return answer({ access_token: token, token_type: "bearer", scope: "" });
      });
      return;
    }

    if (req.method === "GET" && url.pathname === "/user") {
      userRequests++;
      const auth = req.headers.authorization ?? "";
      const token = auth.replace(/^(Bearer|token) /i, "");
      if (!tokens.has(token)) return json(401, { message: "Requires authentication" });
      return json(200, opts.user);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    get deny() {
      return state.deny;
    },
    set deny(v: boolean) {
      state.deny = v;
    },
    tokenRequests,
    get userRequests() {
      return userRequests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
