// A server-rendered thread is part of the page's text (contract sections 23 and 27): before the
// upgrade its HTML (the fragment, island.ts) is set in the page's own font, with a line where the
// composer goes and a footer where each comment's actions go. So that the upgraded thread is about as
// tall as the HTML it replaces whatever the page's style, the element holding one is marked with the
// custom state `:state(in-page)`, which styles.ts gives the page's font (--engagement-font still wins)
// and spacing by its line height, and its composer shows folded to one line until the reader moves
// into it. In a browser without custom states the element keeps its own font.
import { ISLAND_SELECTOR } from "./island.js";

export class InPage {
  private readonly internals: ElementInternals | null;
  /** whether the element holds a server-rendered thread (its island in its light DOM) */
  private inPage = false;
  /** the reader has moved into the folded composer: it stays open */
  private opened = false;

  constructor(
    private readonly element: HTMLElement,
    private readonly requestUpdate: () => void,
  ) {
    // once per element, while it is constructed (the element's own field)
    this.internals = typeof element.attachInternals === "function" ? element.attachInternals() : null;
  }

  /** Marks the element `:state(in-page)` while it holds a server-rendered thread (before each update). */
  mark(): void {
    this.inPage = !!this.element.querySelector(`:scope > ${ISLAND_SELECTOR}`);
    try {
      if (this.inPage) this.internals?.states.add("in-page");
      else this.internals?.states.delete("in-page");
    } catch {
      // a browser that takes only dashed states ("--in-page", Chrome before 125): the element's own look
    }
  }

  /** whether the new comment's composer shows folded (one line) */
  get composerFolded(): boolean {
    return this.inPage && !this.opened;
  }

  /** The reader moved into the folded composer: it opens, and stays open. */
  unfold(): void {
    this.opened = true;
    this.requestUpdate();
  }
}
