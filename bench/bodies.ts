// Comment bodies the benches post (bench/run.ts, bench/pg-cost.ts).

/**
 * A typical formatted comment (about 360 characters): a quote, emphasis, strikethrough, a link, inline
 * code: what readers post when they format at all. `post-hot-typical` posts it (the floor stores it as it is).
 */
export const TYPICAL_BODY =
  "> The numbers in the second chart don't add up to what the report says about the third quarter.\n\n" +
  "I think you're *partly* right, but the ~~old~~ method is still **documented** in [the appendix](https://example.org/report/appendix#methods): " +
  "they divide by `total_population`, not by households. Same mistake as last year, honestly. Worth a correction note?";
