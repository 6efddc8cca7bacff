// The one redaction of the service's log lines (src/lib/log-redaction.ts): each kind of secret, where
// it may stand in a line, and lines without one left as they were.
import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/lib/log-redaction.js";

const B64 = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCde"; // 43 URL-safe characters
const HEX = "0123456789abcdef".repeat(4);

describe("redactSecrets", () => {
  it("takes one-time tokens out of the paths that carry them", () => {
    expect(redactSecrets(`{"path":"/auth/v1/ten_x/email/${B64}"}`)).toBe('{"path":"/auth/v1/ten_x/email/[redacted]"}');
    expect(redactSecrets(`{"path":"/auth/v1/ten_x/email/${B64}/more"}`)).toBe('{"path":"/auth/v1/ten_x/email/[redacted]/more"}');
    expect(redactSecrets(`GET /moderate/v1/dGVuX3g.${B64} 410`)).toBe("GET /moderate/v1/[redacted] 410");
    expect(redactSecrets(`"url":"https://c.example/api/v1/unsubscribe/eyJ2.${B64}?x=1"`)).toBe(
      '"url":"https://c.example/api/v1/unsubscribe/[redacted]?x=1"',
    );
  });

  it("takes the credential out of a chat's incoming-webhook URL", () => {
    expect(redactSecrets('"url":"https://hooks.slack.com/services/T000/B000/XXXXSECRET"')).toBe(
      '"url":"https://hooks.slack.com/services/[redacted]"',
    );
    expect(redactSecrets("POST https://discord.com/api/webhooks/123/tok-en_SECRET failed")).toBe(
      "POST https://discord.com/api/webhooks/[redacted] failed",
    );
  });

  it("takes the values of secret query parameters, in any case", () => {
    expect(redactSecrets(`/console/auth/link?token=${B64}&next=1`)).toBe("/console/auth/link?token=[redacted]&next=1");
    expect(redactSecrets(`/api/v1/stream/d1?ticket=abc123&Last-Event-ID=4`)).toBe("/api/v1/stream/d1?ticket=[redacted]&Last-Event-ID=4");
    expect(redactSecrets(`/cb?CODE=xyz&State=abc`)).toBe("/cb?CODE=[redacted]&State=[redacted]");
    expect(redactSecrets(`/feeds/recent.atom?key=anything`)).toBe("/feeds/recent.atom?key=[redacted]");
  });

  it("takes our secrets' values wherever they stand, keeping the prefix", () => {
    const line = `{"msg":"x rs_${B64} ek_${HEX} pk_${HEX} is_${HEX} st_${HEX} whsec_${B64}="}`;
    const out = redactSecrets(line);
    for (const v of [B64, HEX]) expect(out).not.toContain(v.slice(0, 20));
    expect(out).toBe('{"msg":"x rs_[redacted] ek_[redacted] pk_[redacted] is_[redacted] st_[redacted] whsec_[redacted]"}');
  });

  it("takes JSON Web Tokens", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIiwiaWF0IjoxfQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    expect(redactSecrets(`{"err":"bad token ${jwt} here"}`)).toBe('{"err":"bad token [redacted] here"}');
  });

  it("leaves lines without a secret as they were (the same string)", () => {
    for (const line of [
      '{"level":30,"reqId":"r1","method":"GET","route":"/api/v1/discussions/:discussionId","path":"/api/v1/discussions/first_post","status":200}',
      '{"msg":"this_is_a_long_identifier and first_steps"}',
      '{"path":"/api/v1/comments/cmt_abc"}',
      '{"route":"/auth/v1/:tenantId/email/:token","x":"/moderate/v1/:token","y":"/api/v1/unsubscribe/:token"}',
    ]) {
      expect(redactSecrets(line)).toBe(line);
    }
  });
});
