// The inbox's signature check reads an activity's id, actor and objects from its compact JSON when
// its contexts cannot have changed what those terms mean (src/modules/federation/engine/signer.ts,
// plainActivity); each activity below is read both ways, and the plain read must give what Fedify's
// JSON-LD read gives, or decline (null) and leave it to the long way.
import { describe, expect, it } from "vitest";
import { getDocumentLoader } from "@fedify/fedify";
import { Activity, Create, Update } from "@fedify/vocab";
import { plainActivity } from "../../src/modules/federation/engine/signer.js";

const AS = "https://www.w3.org/ns/activitystreams";
const loader = getDocumentLoader();

async function longWay(a: Record<string, unknown>) {
  const parsed = await Activity.fromJsonLd(a, { documentLoader: loader, contextLoader: loader });
  return {
    id: parsed.id?.href ?? null,
    actorId: parsed.actorId?.href ?? null,
    objectIds: (parsed instanceof Create || parsed instanceof Update ? parsed.objectIds : []).map((u) => u.href),
  };
}

const plainWay = (a: Record<string, unknown>) => {
  const r = plainActivity(a);
  return r && { id: r.id?.href ?? null, actorId: r.actorId?.href ?? null, objectIds: r.objectIds.map((u) => u.href) };
};

/** Mastodon's context: ActivityStreams, security v1 and its own terms inline. */
const MASTODON = [
  AS,
  "https://w3id.org/security/v1",
  {
    manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
    toot: "http://joinmastodon.org/ns#",
    sensitive: "as:sensitive",
    Hashtag: "as:Hashtag",
    votersCount: "toot:votersCount",
    blurhash: "toot:blurhash",
    focalPoint: { "@container": "@list", "@id": "toot:focalPoint" },
  },
];

const note = (id: string) => ({
  id,
  type: "Note",
  attributedTo: "https://social.example/users/alice",
  inReplyTo: "https://blog.example/ap/actors/t/articles/a",
  content: "<p>Hello</p>",
  to: [`${AS}#Public`],
});

const readAlike: [string, Record<string, unknown>][] = [
  [
    "a Mastodon Create(Note)",
    {
      "@context": MASTODON,
      id: "https://social.example/users/alice/statuses/1/activity",
      type: "Create",
      actor: "https://social.example/users/alice",
      object: note("https://social.example/users/alice/statuses/1"),
    },
  ],
  [
    "an Update whose object is on another host",
    {
      "@context": AS,
      id: "https://social.example/users/alice#updates/1",
      type: "Update",
      actor: { id: "https://social.example/users/alice", type: "Person" },
      object: note("https://elsewhere.example/notes/9"),
    },
  ],
  [
    "a Like of a URL",
    {
      "@context": AS,
      id: "https://social.example/likes/1",
      type: "Like",
      actor: "https://social.example/users/alice",
      object: "https://blog.example/c/1",
    },
  ],
  [
    "a Follow without an id",
    {
      "@context": [AS, "https://w3id.org/security/v1"],
      type: "Follow",
      actor: "https://social.example/users/alice",
      object: "https://blog.example/ap/actors/t",
    },
  ],
  [
    "a Create of two objects, one without an id",
    {
      "@context": AS,
      id: "https://social.example/a/2",
      type: "Create",
      actor: "https://social.example/users/alice",
      object: [note("https://social.example/n/2"), { type: "Note", content: "no id" }],
    },
  ],
];

describe("reading an activity without JSON-LD", () => {
  for (const [what, activity] of readAlike) {
    it(`reads ${what} as JSON-LD does`, async () => {
      const plain = plainWay(activity);
      expect(plain).not.toBeNull();
      expect(plain).toEqual(await longWay(activity));
    });
  }

  const declined: [string, Record<string, unknown>][] = [
    [
      "a context redefining `actor`",
      { "@context": [AS, { actor: "https://evil.example/ns#actor" }], type: "Create", actor: "https://a.example/u" },
    ],
    ["a context with @vocab", { "@context": [AS, { "@vocab": "https://evil.example/" }], type: "Like", actor: "https://a.example/u" }],
    ["an unknown context", { "@context": [AS, "https://evil.example/context.jsonld"], type: "Like", actor: "https://a.example/u" }],
    ["no ActivityStreams context", { "@context": "https://w3id.org/security/v1", type: "Like", actor: "https://a.example/u" }],
    ["no context at all", { type: "Like", actor: "https://a.example/u" }],
    ["a type that is not an activity", { "@context": AS, ...note("https://a.example/n/1"), actor: "https://a.example/u" }],
    ["a type array", { "@context": AS, type: ["Create"], actor: "https://a.example/u" }],
    ["two actors", { "@context": AS, type: "Like", actor: ["https://a.example/u", "https://b.example/u"] }],
    ["an actor that is not a URL", { "@context": AS, type: "Like", actor: "alice" }],
    ["an id that is not http(s)", { "@context": AS, type: "Like", id: "urn:uuid:1", actor: "https://a.example/u" }],
  ];
  for (const [what, activity] of declined) {
    it(`leaves ${what} to JSON-LD`, () => {
      expect(plainActivity(activity)).toBeNull();
    });
  }
});
