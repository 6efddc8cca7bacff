// <engagement-thread publishable-key> without `discussion-id` (contract section 27): the thread of the
// page it is on. The page's address is its `<link rel="canonical">` (else its own address without the
// fragment); the element shows the discussion whose url is that page's (GraphQL discussion(url:),
// compared normalized), and on a page that has none yet the discussion its first comment creates,
// named from the address's key as the service's fragment of the page names it
// (src/modules/discussions/url-key.ts, the one function both use), so every reader of the page and
// the server-rendered thread agree on it.
import { discussionIdForKey, urlKey } from "../../../src/modules/discussions/url-key.js";
import { ServiceError, ThreadApi } from "./api.js";

/** The page's address: its canonical link, else where it is without the fragment. */
export function pageAddress(): string {
  const canonical = document.querySelector<HTMLLinkElement>('link[rel="canonical"]')?.href;
  if (canonical && urlKey(canonical) !== null) return canonical;
  return `${location.origin}${location.pathname}${location.search}`;
}

/** Finds the page's discussion once per service, key and address; told the id (after a failure that passes, asked again, backing off). */
export class PageDiscussion {
  private asked: string | null = null;
  private retryIn = 1000;

  constructor(private readonly found: (discussionId: string) => void) {}

  async find(base: string, key: string): Promise<void> {
    const url = pageAddress();
    const pageKey = urlKey(url);
    const ask = `${base}\n${key}\n${url}`;
    if (pageKey === null || this.asked === ask) return;
    this.asked = ask;
    try {
      this.found((await new ThreadApi(base, key).discussionByUrl(url)) ?? discussionIdForKey(pageKey));
    } catch (e) {
      // a refusal is the element's to show (the loader meets it again); a failure that passes is asked again
      if (e instanceof ServiceError && !["network", "unavailable", "rate_limited", "internal_error"].includes(e.code)) {
        this.found(discussionIdForKey(pageKey));
        return;
      }
      this.asked = null;
      setTimeout(() => void this.find(base, key), this.retryIn);
      this.retryIn = Math.min(this.retryIn * 2, 30_000);
    }
  }
}
