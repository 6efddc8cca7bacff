// A second fediverse server for the tests (contract section 24: "tested against a real ActivityPub
// peer"), shaped like Mastodon: built on Fedify, on loopback, with its own actor (a Person at
// /users/{name}, its RSA and Ed25519 keys, inbox, shared inbox /inbox), statuses at
// /users/{name}/statuses/{id}, and every activity it sends signed by Fedify (HTTP signatures: RFC 9421
// first, then draft-cavage when that is refused, as Fedify double-knocks; and Object Integrity
// Proofs). It records what its inbox receives (after Fedify verified the sender's signature), and
// which spec signed each POST to it (`knocks`); `accepts` makes it refuse (401) POSTs signed by the
// other spec, as a server that verifies only one. Test-only: it fetches loopback http (Fedify's
// allowPrivateAddress), which the service itself allows only under ALLOW_HTTP_WEBHOOKS.
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createFederation,
  generateCryptoKeyPair,
  MemoryKvStore,
  signRequest,
  type Federation,
  type HttpMessageSignaturesSpec,
} from "@fedify/fedify";
import {
  Accept,
  Activity,
  Collection,
  Create,
  Delete,
  Endpoints,
  Follow,
  Image,
  Like,
  Mention,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Tombstone,
  Undo,
  Update,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

export interface Received {
  type: string;
  json: Record<string, unknown>;
}

/** A signed POST that reached the peer: the spec that signed it (null: unsigned) and the status it was answered. */
export interface Knock {
  path: string;
  /** the body as it came */
  body: string;
  spec: HttpMessageSignaturesSpec | null;
  status: number;
}

export interface FediPeer {
  url: string;
  /** every POST to the peer, oldest first */
  knocks: Knock[];
  /** the path of every GET to the peer (its actors, keys, statuses), oldest first */
  fetched: string[];
  actorUri(name: string): URL;
  statusUri(name: string, id: string): URL;
  /** what the inbox accepted, oldest first */
  received: Received[];
  /** A remote object as the peer's Fedify reads it (its document loader: loopback http allowed). */
  lookup(url: URL): Promise<unknown>;
  /**
   * `acct:user@host` resolved as Mastodon does: WebFinger at the host (`hosts` maps a host to the
   * loopback origin that stands for it, as a resolver would; plain http there), following up to 5
   * redirects; then the JRD's `self` actor fetched. Null when not found.
   */
  resolve(
    acct: string,
    hosts?: Record<string, string>,
  ): Promise<{ jrd: { subject: string; aliases?: string[] }; redirects: number; actor: unknown } | null>;
  /** A remote collection as the peer reads it: its totalItems and every item (through its pages) as JSON-LD. */
  collection(url: URL): Promise<{ totalItems: number | null; items: Record<string, unknown>[] }>;
  follow(name: string, target: URL): Promise<Follow>;
  undo(name: string, target: URL, activity: Activity): Promise<void>;
  reply(name: string, target: URL, inReplyTo: URL, html: string, id?: string): Promise<Note>;
  update(name: string, target: URL, note: Note, html: string): Promise<void>;
  remove(name: string, target: URL, note: Note): Promise<void>;
  like(name: string, target: URL, object: URL): Promise<Like>;
  /**
   * POSTs `json` as it is to `inbox`, signed by `name`'s RSA key (draft-cavage, as Mastodon; `spec`
   * another); `tamper` changes the body after signing; `signature` changes the Signature header after
   * signing; `from` sends it from that loopback address (another client).
   */
  /** `json` as signedPost would send it to `inbox`: its headers, signed (draft-cavage unless `spec`), and its body. */
  signed(name: string, inbox: URL, json: unknown, spec?: HttpMessageSignaturesSpec): Promise<{ headers: Headers; body: string }>;
  signedPost(
    name: string,
    inbox: URL,
    json: unknown,
    opts?: {
      tamper?: (body: string) => string;
      signature?: (header: string) => string;
      from?: string;
      spec?: HttpMessageSignaturesSpec;
    },
  ): Promise<Response>;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });

/** A POST sent from the local address `from` (node:http's localAddress; fetch cannot choose one). */
function postFrom(from: string, url: URL, headers: Headers, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", localAddress: from, headers: Object.fromEntries(headers.entries()) }, (res) => {
      void readBody(res).then((b) => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        resolve(new Response(res.statusCode === 204 ? null : new Uint8Array(b), { status: res.statusCode ?? 0, headers: h }));
      }, reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * `inboxOrigin` / `sharedInboxOrigin`: the actors declare their inbox / shared inbox (also under
 * `endpoints`) on that other origin (a server pointing its followers' deliveries elsewhere).
 */
export async function startFediPeer(
  opts: { names?: string[]; host?: string; inboxOrigin?: string; sharedInboxOrigin?: string; accepts?: HttpMessageSignaturesSpec } = {},
): Promise<FediPeer> {
  const knocks: Knock[] = [];
  const fetched: string[] = [];
  const names = new Set(opts.names ?? ["alice", "bob"]);
  const keys = new Map<string, CryptoKeyPair[]>();
  // RSA of 2,048 bits, as Mastodon makes its accounts' keys (Fedify's generateCryptoKeyPair makes 4,096)
  const rsa = () =>
    crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    );
  for (const n of names) keys.set(n, [await rsa(), await generateCryptoKeyPair("Ed25519")]);
  const notes = new Map<string, Note>();
  const received: Received[] = [];
  const federation: Federation<void> = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!names.has(identifier)) return null;
      const pairs = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: `${identifier[0]!.toUpperCase()}${identifier.slice(1)} of the peer`,
        icon: new Image({ url: new URL(`/avatars/${identifier}.png`, ctx.url), mediaType: "image/png" }),
        inbox: opts.inboxOrigin ? new URL(`/users/${identifier}/inbox`, opts.inboxOrigin) : ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: opts.sharedInboxOrigin ? new URL("/inbox", opts.sharedInboxOrigin) : ctx.getInboxUri() }),
        publicKey: pairs[0]?.cryptographicKey ?? null,
        assertionMethods: pairs.map((p) => p.multikey),
      });
    })
    .setKeyPairsDispatcher((_ctx, identifier) => keys.get(identifier) ?? []);
  federation.setObjectDispatcher(Note, "/users/{name}/statuses/{id}", (_ctx, { name, id }) => notes.get(`${name}/${id}`) ?? null);
  const record = async (_ctx: unknown, activity: Activity) => {
    received.push({ type: activity.constructor.name, json: (await activity.toJsonLd()) as Record<string, unknown> });
  };
  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Accept, record)
    .on(Create, record)
    .on(Update, record)
    .on(Delete, record)
    .on(Follow, record)
    .on(Undo, record);

  let origin = "";
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === "POST" ? await readBody(req) : null;
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const request = new Request(new URL(req.url ?? "/", origin), {
        method: req.method ?? "GET",
        headers,
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
      let answer: Response;
      if (req.method === "POST") {
        const spec = headers.has("signature-input") ? "rfc9421" : headers.has("signature") ? "draft-cavage-http-signatures-12" : null;
        answer =
          opts.accepts && spec !== opts.accepts
            ? new Response("this server verifies another spec", { status: 401 })
            : await federation.fetch(request, { contextData: undefined });
        knocks.push({ path: new URL(request.url).pathname, body: body?.toString("utf8") ?? "", spec, status: answer.status });
      } else {
        fetched.push(new URL(request.url).pathname);
        answer = await federation.fetch(request, { contextData: undefined });
      }
      res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  // a loopback address of its own (127.0.0.2, …) makes it another domain to the service (its rate, its blocks)
  const listenOn = opts.host && /^127\./.test(opts.host) ? opts.host : "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(0, listenOn, resolve));
  origin = `http://${opts.host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}`;
  const ctx = () => federation.createContext(new URL(origin), undefined);
  let seq = 0;

  /** The target actor, as Fedify fetches it (its inbox). */
  const recipient = async (target: URL) => {
    const actor = await ctx().lookupObject(target);
    if (!actor || !("inboxId" in actor) || !actor.id) throw new Error(`no actor at ${target.href}`);
    return actor as Person;
  };
  const send = async (name: string, target: URL, activity: Activity) =>
    ctx().sendActivity({ identifier: name }, await recipient(target), activity, { immediate: true });

  const peer: FediPeer = {
    url: origin,
    knocks,
    fetched,
    actorUri: (name) => ctx().getActorUri(name),
    statusUri: (name, id) => new URL(`/users/${name}/statuses/${id}`, origin),
    received,
    lookup: (url) => ctx().lookupObject(url),
    async resolve(acct, hosts = {}) {
      const host = acct.slice(acct.lastIndexOf("@") + 1);
      let url = new URL(`/.well-known/webfinger?resource=${encodeURIComponent(acct)}`, hosts[host] ?? `https://${host}`);
      for (let redirects = 0; redirects <= 5; redirects++) {
        const res = await fetch(url, { headers: { accept: "application/jrd+json" }, redirect: "manual" });
        const location = res.headers.get("location");
        if (res.status >= 300 && res.status < 400 && location) {
          await res.body?.cancel();
          url = new URL(location, url);
          continue;
        }
        if (!res.ok) return null;
        const jrd = (await res.json()) as { subject: string; aliases?: string[]; links?: { rel: string; type?: string; href?: string }[] };
        const self = jrd.links?.find((l) => l.rel === "self" && l.type === "application/activity+json")?.href;
        return { jrd, redirects, actor: self ? await ctx().lookupObject(new URL(self)) : null };
      }
      return null;
    },
    async collection(url) {
      const c = await ctx().lookupObject(url);
      if (!(c instanceof Collection)) throw new Error(`no collection at ${url.href}`);
      const items: Record<string, unknown>[] = [];
      for await (const item of ctx().traverseCollection(c)) items.push((await item.toJsonLd()) as Record<string, unknown>);
      return { totalItems: c.totalItems, items };
    },
    async follow(name, target) {
      const follow = new Follow({ id: new URL(`/follows/${++seq}`, origin), actor: ctx().getActorUri(name), object: target });
      await send(name, target, follow);
      return follow;
    },
    async undo(name, target, activity) {
      await send(name, target, new Undo({ id: new URL(`/undos/${++seq}`, origin), actor: ctx().getActorUri(name), object: activity }));
    },
    async reply(name, target, inReplyTo, html, id = String(++seq)) {
      const note = new Note({
        id: peer.statusUri(name, id),
        attribution: ctx().getActorUri(name),
        replyTarget: inReplyTo,
        content: html,
        to: PUBLIC_COLLECTION,
        ccs: [target],
        tags: [new Mention({ href: target })],
        published: Temporal.Now.instant(),
      });
      notes.set(`${name}/${id}`, note);
      await send(
        name,
        target,
        new Create({
          id: new URL(`${note.id!.href}/activity`),
          actor: ctx().getActorUri(name),
          object: note,
          to: PUBLIC_COLLECTION,
          published: note.published,
        }),
      );
      return note;
    },
    async update(name, target, note, html) {
      const edited = note.clone({ content: html, updated: Temporal.Now.instant() });
      const [, , , id] = note.id!.pathname.split("/").slice(1);
      notes.set(`${name}/${id ?? ""}`, edited);
      await send(
        name,
        target,
        new Update({ id: new URL(`${note.id!.href}#updates/${++seq}`), actor: ctx().getActorUri(name), object: edited }),
      );
    },
    async remove(name, target, note) {
      await send(
        name,
        target,
        new Delete({ id: new URL(`${note.id!.href}#delete`), actor: ctx().getActorUri(name), object: new Tombstone({ id: note.id }) }),
      );
    },
    async like(name, target, object) {
      const like = new Like({ id: new URL(`/likes/${++seq}`, origin), actor: ctx().getActorUri(name), object });
      await send(name, target, like);
      return like;
    },
    async signed(name, inbox, json, spec = "draft-cavage-http-signatures-12") {
      const body = JSON.stringify(json);
      const unsigned = new Request(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
      const rsa = keys.get(name)![0]!;
      const signed = await signRequest(unsigned, rsa.privateKey, new URL(`${ctx().getActorUri(name).href}#main-key`), { spec });
      return { headers: signed.headers, body };
    },
    async signedPost(name, inbox, json, o = {}) {
      const signed = await peer.signed(name, inbox, json, o.spec);
      if (o.signature) signed.headers.set("signature", o.signature(signed.headers.get("signature") ?? ""));
      const sent = o.tamper ? o.tamper(signed.body) : signed.body;
      if (o.from) return postFrom(o.from, inbox, signed.headers, sent);
      return fetch(inbox, { method: "POST", headers: signed.headers, body: sent });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return peer;
}
