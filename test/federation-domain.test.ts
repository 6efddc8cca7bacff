// A handle on the site's own domain (contract section 28): with settings federation.domain the actor
// is @<handle>@<domain>. The site redirects its /.well-known/webfinger to the service (a tiny
// node:http server on loopback stands in for it, answering 301 or 302 with the query kept), and the
// Fedify peer of test/support/fedi-peer.ts, told that the domain is that server, resolves
// acct:<handle>@<domain> through the redirect to the service's actor. WebFinger answers the domain
// form with the PUBLIC_URL host form as an alias, and the PUBLIC_URL form with the domain form.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Service } from "@fedify/vocab";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, getAp, startFederatingServer } from "./support/federating-server.js";

let server: Awaited<ReturnType<typeof startFederatingServer>>;
let peer: FediPeer;
let site: Server;
let siteOrigin: string;
/** what the site answers its /.well-known/webfinger with */
let siteStatus = 301;

beforeAll(async () => {
  [server, peer] = await Promise.all([startFederatingServer(), startFediPeer({ names: ["alice"] })]);
  site = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://site");
    if (url.pathname === "/.well-known/webfinger") {
      res.writeHead(siteStatus, { location: `${server.publicUrl}/.well-known/webfinger${url.search}` }).end();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  await peer?.close();
  await server?.stop();
});

const host = () => new URL(server.publicUrl).host;

describe("a handle on the site's domain", () => {
  it("is resolved by the peer through the site's redirect, and WebFinger names both forms", async () => {
    const t = await federatingTenant(server, "blogger");
    const hosts = { "blog.example": siteOrigin };
    // without federation.domain the domain form is not ours
    expect(await peer.resolve("acct:blogger@blog.example", hosts)).toBeNull();

    expect((await t.api.patch("/api/v1/settings", { federation: { domain: "Blog.Example" } })).status).toBe(200);
    for (const status of [301, 302]) {
      siteStatus = status;
      const found = await peer.resolve("acct:blogger@blog.example", hosts);
      expect(found?.redirects).toBe(1);
      expect(found?.jrd.subject).toBe("acct:blogger@blog.example");
      expect(found?.jrd.aliases).toEqual([`acct:blogger@${host()}`, t.actor]);
      expect(found?.actor).toBeInstanceOf(Service);
      expect((found?.actor as Service).id?.href).toBe(t.actor);
      expect((found?.actor as Service).preferredUsername).toBe("blogger");
    }

    // the PUBLIC_URL form is still answered, naming the actor by the domain form (its subject), the
    // PUBLIC_URL form an alias: a server that met the actor by its id names it @blogger@blog.example
    const direct = await peer.resolve(`acct:blogger@${host()}`, { [host()]: server.publicUrl });
    expect(direct?.redirects).toBe(0);
    expect(direct?.jrd.subject).toBe("acct:blogger@blog.example");
    expect(direct?.jrd.aliases).toEqual([`acct:blogger@${host()}`, t.actor]);
    expect((direct?.actor as Service).id?.href).toBe(t.actor);

    // asked for the actor's id: both forms among the aliases
    const byId = await getAp(`${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent(t.actor)}`, "application/jrd+json");
    expect(byId.status).toBe(200);
    expect(byId.json.subject).toBe(t.actor);
    expect(byId.json.aliases).toEqual(["acct:blogger@blog.example", `acct:blogger@${host()}`]);

    // another domain, another handle on the domain, a handle that is not one: 404
    for (const resource of [
      "acct:blogger@other.example",
      "acct:nobody@blog.example",
      "acct:Not-A-Handle@blog.example",
      "acct:blogger@blog.example:8080",
    ]) {
      const res = await getAp(`${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`, "application/jrd+json");
      expect([resource, res.status]).toEqual([resource, 404]);
    }

    // federation off: neither form
    await t.api.patch("/api/v1/settings", { federation: { enabled: false } });
    const off = await getAp(
      `${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent("acct:blogger@blog.example")}`,
      "application/jrd+json",
    );
    expect(off.status).toBe(404);
  });
});
