import { describe, expect, it } from "vitest";
import { checkAddress, checkWebhookUrl, classifyAddress, type UrlGuardOptions } from "../../src/outbound/url-guard.js";

const dnsTable: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "v6.example.com": ["2606:2800:220:1:248:1893:25c8:1946"],
  "dual.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "mixed.example.com": ["93.184.216.34", "10.0.0.5"],
  "internal.example.com": ["10.1.2.3"],
  "rebind.example.com": ["127.0.0.1"],
  "meta.example.com": ["169.254.169.254"],
  "meta6.example.com": ["fd00:ec2::254"],
  "ali.example.com": ["100.100.100.200"],
  "mapped.example.com": ["::ffff:192.168.1.1"],
  "cgnat.example.com": ["100.64.1.1"],
  "ula.example.com": ["fd12:3456::1"],
  "ll6.example.com": ["fe80::1"],
  "svc.corp.example": ["10.9.9.9"],
  localhost: ["127.0.0.1", "::1"],
  "empty.example.com": [],
};

const resolve = async (host: string): Promise<string[]> => {
  const hit = dnsTable[host];
  if (!hit) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return hit;
};

const prod: UrlGuardOptions = { allowHttpLoopback: false, allowList: [], resolve };
const dev: UrlGuardOptions = { allowHttpLoopback: true, allowList: [], resolve };
const allow: UrlGuardOptions = {
  allowHttpLoopback: false,
  allowList: ["10.1.0.0/16", "*.corp.example", "169.254.0.0/16", "fd12::/16"],
  resolve,
};

type Row = [url: string, opts: UrlGuardOptions, ok: boolean, messagePart?: string];

const table: Row[] = [
  // basics
  ["https://hooks.example.com/webhook", prod, true],
  ["https://hooks.example.com:8443/x?y=1", prod, true],
  ["https://v6.example.com/", prod, true],
  ["https://dual.example.com/", prod, true],
  ["https://93.184.216.34/hook", prod, true],
  ["https://[2606:2800:220:1:248:1893:25c8:1946]/hook", prod, true],
  ["not a url", prod, false, "valid"],
  ["/relative", prod, false, "valid"],
  ["ftp://hooks.example.com/", prod, false, "https"],
  ["javascript:alert(1)", prod, false, "https"],
  ["http://hooks.example.com/", prod, false, "https"],
  ["http://hooks.example.com/", dev, false, "loopback"],
  ["https://user:pw@hooks.example.com/", prod, false, "credentials"],
  ["https://user@hooks.example.com/", prod, false, "credentials"],
  ["https://nxdomain.example.com/", prod, false, "resolved"],
  ["https://empty.example.com/", prod, false, "resolved"],
  // private & friends
  ["https://internal.example.com/", prod, false, "private"],
  ["https://mixed.example.com/", prod, false, "10.0.0.5"],
  ["https://10.0.0.1/", prod, false, "private"],
  ["https://172.16.0.1/", prod, false, "private"],
  ["https://172.31.255.255/", prod, false, "private"],
  ["https://172.32.0.1/", prod, true],
  ["https://192.168.0.10/", prod, false, "private"],
  ["https://[fc00::1]/", prod, false, "private"],
  ["https://ula.example.com/", prod, false, "private"],
  // loopback
  ["https://127.0.0.1/", prod, false, "loopback"],
  ["https://127.1.2.3/", prod, false, "loopback"],
  ["https://2130706433/", prod, false, "loopback"], // WHATWG parses to 127.0.0.1
  ["https://0x7f000001/", prod, false, "loopback"],
  ["https://[::1]/", prod, false, "loopback"],
  ["https://localhost/", prod, false, "loopback"],
  ["https://rebind.example.com/", prod, false, "loopback"],
  ["https://[::ffff:127.0.0.1]/", prod, false, "loopback"],
  // link-local & metadata
  ["https://169.254.1.1/", prod, false, "link-local"],
  ["https://[fe80::1]/", prod, false, "link-local"],
  ["https://ll6.example.com/", prod, false, "link-local"],
  ["https://169.254.169.254/latest/meta-data", prod, false, "metadata"],
  ["https://meta.example.com/", prod, false, "metadata"],
  ["https://meta6.example.com/", prod, false, "metadata"],
  ["https://ali.example.com/", prod, false, "metadata"],
  ["https://[::ffff:169.254.169.254]/", prod, false, "metadata"],
  // other special ranges
  ["https://0.0.0.0/", prod, false, "unspecified"],
  ["https://[::]/", prod, false, "unspecified"],
  ["https://100.64.0.1/", prod, false, "carrier-grade NAT"],
  ["https://cgnat.example.com/", prod, false, "carrier-grade NAT"],
  ["https://224.0.0.1/", prod, false, "multicast"],
  ["https://[ff02::1]/", prod, false, "multicast"],
  ["https://255.255.255.255/", prod, false, "reserved"],
  ["https://240.0.0.1/", prod, false, "reserved"],
  ["https://192.0.2.1/", prod, false, "reserved"],
  ["https://[2001:db8::1]/", prod, false, "reserved"],
  ["https://mapped.example.com/", prod, false, "private"],
  ["https://[64:ff9b::a00:1]/", prod, false, "private"], // NAT64 of 10.0.0.1
  ["https://[2002:c0a8:101::1]/", prod, false, "private"], // 6to4 of 192.168.1.1
  // development flag
  ["http://localhost:3000/hook", dev, true],
  ["http://127.0.0.1:3000/hook", dev, true],
  ["http://[::1]:3000/hook", dev, true],
  ["https://localhost/hook", dev, true],
  ["http://rebind.example.com/", dev, false, "https"], // a name that is not "localhost"
  ["https://rebind.example.com/", dev, true], // https to loopback under the flag
  ["https://internal.example.com/", dev, false, "private"],
  ["http://localhost/", prod, false, "https"],
  // allow-list
  ["https://internal.example.com/", allow, true],
  ["https://10.1.200.1/", allow, true],
  ["https://10.2.0.1/", allow, false, "private"],
  ["https://svc.corp.example/", allow, true],
  ["https://corp.example.evil.com/", allow, false, "resolved"],
  ["https://169.254.10.10/", allow, true],
  ["https://169.254.169.254/", allow, false, "metadata"], // CIDR does not admit metadata
  ["https://ula.example.com/", allow, true],
  ["http://internal.example.com/", allow, false, "https"], // allow-list never enables http
];

describe("checkWebhookUrl", () => {
  it.each(table)("%s", async (url, opts, ok, messagePart) => {
    const result = await checkWebhookUrl(url, opts);
    if (ok) {
      expect(result).toMatchObject({ ok: true });
      if (result.ok) {
        expect(result.url).toBeInstanceOf(URL);
        expect(result.addresses.length).toBeGreaterThan(0);
      }
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok && messagePart) expect(result.message).toContain(messagePart);
    }
  });

  it("admits metadata only with an exact-IP allow-list entry", async () => {
    const opts = { ...prod, allowList: ["169.254.169.254"] };
    expect((await checkWebhookUrl("https://169.254.169.254/", opts)).ok).toBe(true);
    expect((await checkWebhookUrl("https://meta.example.com/", { ...prod, allowList: ["meta.example.com"] })).ok).toBe(false);
  });

  it("admits a private host named in the allow-list", async () => {
    const opts = { ...prod, allowList: ["Internal.Example.com."] };
    expect(await checkWebhookUrl("https://internal.example.com/", opts)).toMatchObject({
      ok: true,
      addresses: ["10.1.2.3"],
    });
  });

  it("resolves with the system resolver by default (literals need no DNS)", async () => {
    const r = await checkWebhookUrl("https://127.0.0.1/", { allowHttpLoopback: false, allowList: [] });
    expect(r.ok).toBe(false);
    const l = await checkWebhookUrl("http://localhost:9/", { allowHttpLoopback: true, allowList: [] });
    expect(l.ok).toBe(true);
  });

  it("accepts URL objects", async () => {
    expect((await checkWebhookUrl(new URL("https://hooks.example.com/"), prod)).ok).toBe(true);
  });
});

describe("checkAddress / classifyAddress", () => {
  const policy = { allowHttpLoopback: false, allowList: [] as string[] };

  it("classifies", () => {
    expect(classifyAddress("8.8.8.8")).toBe("public");
    expect(classifyAddress("2001:4860:4860::8888")).toBe("public");
    expect(classifyAddress("::ffff:8.8.8.8")).toBe("public");
    expect(classifyAddress("::ffff:10.0.0.1")).toBe("private");
    expect(classifyAddress("::ffff:7f00:1")).toBe("loopback");
    expect(classifyAddress("fe80::1%eth0")).toBe("link_local");
    expect(classifyAddress("::127.0.0.1")).toBe("reserved");
    expect(classifyAddress("100.100.100.200")).toBe("metadata");
    expect(classifyAddress("localhost")).toBe("invalid");
    expect(classifyAddress("")).toBe("invalid");
  });

  it("re-checks delivery-time addresses", () => {
    expect(checkAddress("93.184.216.34", policy).allowed).toBe(true);
    expect(checkAddress("127.0.0.1", policy).allowed).toBe(false);
    expect(checkAddress("127.0.0.1", { ...policy, allowHttpLoopback: true }).allowed).toBe(true);
    expect(checkAddress("::1", { ...policy, allowHttpLoopback: true }).allowed).toBe(true);
    expect(checkAddress("10.0.0.1", { ...policy, allowList: ["10.0.0.0/8"] }).allowed).toBe(true);
    expect(checkAddress("::ffff:10.0.0.1", { ...policy, allowList: ["10.0.0.0/8"] }).allowed).toBe(true);
    expect(checkAddress("10.0.0.1", { ...policy, allowList: ["svc.internal"], hostname: "svc.internal" }).allowed).toBe(true);
    expect(checkAddress("10.0.0.1", { ...policy, allowList: ["svc.internal"], hostname: "other" }).allowed).toBe(false);
    expect(checkAddress("not-an-ip", policy).allowed).toBe(false);
    expect(checkAddress("10.0.0.1", { ...policy, allowList: ["garbage/99", ""] }).allowed).toBe(false);
  });
});

describe("refusals name the setting that allows them", () => {
  const strict: UrlGuardOptions = { allowHttpLoopback: false, allowList: [] };
  it("an http receiver on this machine names ALLOW_HTTP_WEBHOOKS", async () => {
    const r = await checkWebhookUrl("http://127.0.0.1:4000/hooks", strict);
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining("ALLOW_HTTP_WEBHOOKS=1") });
  });
  it("an https receiver on a loopback address names ALLOW_HTTP_WEBHOOKS and WEBHOOK_ALLOWLIST", async () => {
    const r = await checkWebhookUrl("https://127.0.0.1/hooks", strict);
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/ALLOW_HTTP_WEBHOOKS=1.*WEBHOOK_ALLOWLIST/) });
  });
  it("a private address names WEBHOOK_ALLOWLIST; a metadata address names nothing", async () => {
    const priv = await checkWebhookUrl("https://10.1.2.3/hooks", strict);
    expect(priv).toMatchObject({ ok: false, message: expect.stringContaining("WEBHOOK_ALLOWLIST") });
    const meta = await checkWebhookUrl("https://169.254.169.254/latest", strict);
    expect(meta.ok).toBe(false);
    expect((meta as { message: string }).message).not.toMatch(/WEBHOOK_ALLOWLIST|ALLOW_HTTP/);
  });
  it("a public http url is told https only", async () => {
    const r = await checkWebhookUrl("http://hooks.example.com/x", strict);
    expect(r).toEqual({ ok: false, message: "url must use https" });
  });
});
