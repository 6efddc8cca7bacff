// A remote Note's `content` (HTML, as Mastodon writes it) made into a comment's body source, which
// then goes through the one renderer and sanitizer every body takes (src/lib/markdown.ts renderBody,
// in postComment/editComment): paragraphs become blank-line-separated, <br> a line break, a link
// `[text](href)` unless its text is its address or a mention/hashtag (then its text), every other tag
// is dropped and its text kept (script and style with their text). Parsed by htmlparser2 (its
// entities decoded); the text is cut at `max` characters.
import { Parser } from "htmlparser2";

const BLOCKS = new Set(["p", "div", "blockquote", "li", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol"]);
const DROPPED = new Set(["script", "style", "template"]);

/** Markdown's own characters in a link text, escaped so that the text stays text. */
const escapeLinkText = (s: string) => s.replace(/[[\]\\]/g, (c) => `\\${c}`);

export function contentToBody(html: string, max: number): string {
  let out = "";
  let dropped = 0;
  let link: { href: string; text: string; plain: boolean } | null = null;
  const write = (s: string) => {
    if (link) link.text += s;
    else out += s;
  };
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (DROPPED.has(name)) dropped++;
        if (dropped) return;
        if (name === "br") write("\n");
        else if (BLOCKS.has(name) && out.length > 0 && !out.endsWith("\n\n")) out += out.endsWith("\n") ? "\n" : "\n\n";
        else if (name === "a" && !link) {
          const href = attrs.href ?? "";
          const cls = ` ${attrs.class ?? ""} `;
          link = { href, text: "", plain: !/^https?:\/\//i.test(href) || / (mention|hashtag|u-url) /.test(cls) };
        }
      },
      ontext(text) {
        if (!dropped) write(text);
      },
      onclosetag(name) {
        if (DROPPED.has(name)) {
          dropped = Math.max(0, dropped - 1);
          return;
        }
        if (dropped) return;
        if (name === "a" && link) {
          const { href, text, plain } = link;
          link = null;
          const shown = text.trim();
          out +=
            plain || shown === "" || shown === href
              ? shown || href
              : `[${escapeLinkText(shown)}](<${href.replace(/[<>\s]/g, encodeURIComponent)}>)`;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  const body = out
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const chars = [...body];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : body;
}
