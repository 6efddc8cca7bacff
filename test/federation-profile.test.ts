// The actor's profile (contract section 28): its `url` (settings federation.url, else the site's first
// allowed origin), `icon` (federation.icon) and `summary` (federation.summary, else a sentence naming
// the site), and a browser (Accept: text/html) sent on by 302: from the actor to the site, from an
// Article to its page. Read by the Fedify peer of test/support/fedi-peer.ts as a remote server would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Image, Service } from "@fedify/vocab";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, getAp, startFederatingServer } from "./support/federating-server.js";

let server: Awaited<ReturnType<typeof startFederatingServer>>;
let peer: FediPeer;

beforeAll(async () => {
  [server, peer] = await Promise.all([startFederatingServer(), startFediPeer({ names: ["alice"] })]);
});
afterAll(async () => {
  await peer?.close();
  await server?.stop();
});

describe("the actor's profile", () => {
  it("has the site's url (first allowed origin by default), an icon and a summary, and sends a browser to the site", async () => {
    const t = await federatingTenant(server, "profiled");
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: ["https://blog.example", "https://other.example"] })).status).toBe(200);
    let actor = await getAp(t.actor);
    expect(actor.json.url).toBe("https://blog.example/");
    expect(actor.json.icon).toBeUndefined();
    expect(actor.json.summary).toMatch(/^<p>Comments of .*: follow to see its discussions/);

    const patched = await t.api.patch("/api/v1/settings", {
      federation: { url: "https://blog.example/about", icon: "https://cdn.blog.example/me.png", summary: "Notes <& thoughts>" },
    });
    expect(patched.status).toBe(200);
    actor = await getAp(t.actor);
    expect(actor.json.url).toBe("https://blog.example/about");
    expect(actor.json.icon).toEqual({ type: "Image", mediaType: "image/png", url: "https://cdn.blog.example/me.png" });
    expect(actor.json.summary).toBe("<p>Notes &lt;&amp; thoughts&gt;</p>");

    // as the peer reads it
    const seen = await peer.lookup(new URL(t.actor));
    expect(seen).toBeInstanceOf(Service);
    const service = seen as Service;
    expect(service.url?.href).toBe("https://blog.example/about");
    const icon = await service.getIcon();
    expect(icon).toBeInstanceOf(Image);
    expect((icon?.url as URL | null)?.href).toBe("https://cdn.blog.example/me.png");

    // a browser is sent to the site; the Article's browser to its page
    const html = await getAp(t.actor, "text/html");
    expect(html.status).toBe(302);
    expect(html.headers.get("location")).toBe("https://blog.example/about");
    expect((await t.api.put("/api/v1/discussions/profile-post", { title: "A post", url: "https://blog.example/p/1" })).status).toBeLessThan(
      300,
    );
    const page = await getAp(`${t.actor}/articles/profile-post`, "text/html,application/xhtml+xml");
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("https://blog.example/p/1");

    // a request's Host (or X-Forwarded-Host) names no id: they are PUBLIC_URL's
    const forged = await fetch(t.actor, {
      headers: { accept: "application/activity+json", host: "evil.example", "x-forwarded-host": "evil.example" },
    });
    const forgedActor = (await forged.json()) as { id: string; inbox: string; outbox: string };
    expect([forgedActor.id, forgedActor.inbox, forgedActor.outbox]).toEqual([t.actor, `${t.actor}/inbox`, `${t.actor}/outbox`]);
    const finger = await fetch(`${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent("acct:profiled@evil.example")}`, {
      headers: { host: "evil.example" },
    });
    expect(finger.status).toBe(404);

    // without a url or an allowed origin there is nowhere to send a browser: 406 as before
    await t.api.patch("/api/v1/settings", { allowedOrigins: [], federation: { url: null } });
    expect((await getAp(t.actor)).json.url).toBeUndefined();
    expect((await getAp(t.actor, "text/html")).status).toBe(406);
  });
});
