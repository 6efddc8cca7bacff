// The words of <engagement-thread> in ten languages, chosen by the element's `lang` attribute (else
// the page's, else the browser's; a language it lacks is English); any string can be overridden per
// element with `element.strings = { post: "Send" }`. `{n}`, `{name}`, `{until}`, `{origin}` are
// filled in when shown. English is here, in thread.js; the other nine are embed/src/thread/i18n/
// <lang>.json, copied by `npm run build:embed` to dist/embed/v1/i18n/ and fetched by the element when
// it first needs them (all ten in thread.js would be about 10 KB gzipped more, past its 30 KB budget).
// test/unit/embed-i18n.test.ts checks every language has every message with its placeholders.

export const EN = {
  title: "Comments",
  count_one: "{n} comment",
  count_other: "{n} comments",
  sort_label: "Sort comments",
  sort_newest: "Newest",
  sort_oldest: "Oldest",
  sort_top: "Top",
  sort_best: "Best",
  sort_score: "Score",
  loading: "Loading comments…",
  load_failed: "Comments could not be loaded.",
  retry: "Try again",
  empty: "No comments yet. Start the discussion.",
  composer_label: "Write a comment",
  composer_placeholder: "Join the discussion…",
  reply_label: "Reply to {name}",
  edit_label: "Edit your comment",
  post: "Post comment",
  post_reply: "Post reply",
  posting: "Posting…",
  reply: "Reply",
  cancel: "Cancel",
  edit: "Edit",
  save: "Save",
  delete: "Delete",
  delete_confirm: "Delete this comment?",
  delete_yes: "Yes, delete",
  delete_no: "Keep it",
  report: "Report",
  report_title: "Why should a moderator look at this comment?",
  reason_spam: "Spam",
  reason_abuse: "Abuse or harassment",
  reason_off_topic: "Off topic",
  reason_other: "Something else",
  report_note: "Note for the moderators (optional)",
  report_send: "Send report",
  reported: "Thank you. A moderator will take a look.",
  pending: "Awaiting moderation",
  pending_notice: "Thanks! Your comment will appear once a moderator approves it.",
  edited: "edited",
  on_bluesky: "on Bluesky",
  pinned: "Pinned",
  you: "you",
  deleted: "This comment was deleted.",
  load_more: "Load more comments",
  more_replies_one: "Show {n} more reply",
  more_replies_other: "Show {n} more replies",
  new_comments_one: "Show {n} new comment",
  new_comments_other: "Show {n} new comments",
  reactions_label: "Reactions",
  reaction_like: "Like",
  reaction_love: "Love",
  reaction_laugh: "Laugh",
  reaction_wow: "Wow",
  reaction_sad: "Sad",
  reaction_angry: "Angry",
  reaction_count: "{name}: {n}",
  page_reactions_label: "Reactions to this page",
  votes_label: "Votes",
  upvote: "Upvote",
  downvote: "Downvote",
  score_label: "Score",
  score_detail: "{up} up, {down} down",
  locked: "Comments are closed on this discussion.",
  archived: "This discussion is archived: it can be read but no longer changed.",
  sign_in: "Sign in to join the discussion.",
  sign_in_button: "Sign in",
  signed_in_as: "Signed in as {name}",
  sign_out: "Sign out",
  add_passkey: "Add a passkey",
  sign_in_blocked: "The sign-in window could not open. Allow pop-ups for this page and try again.",
  reconnecting: "Live updates paused, reconnecting…",
  reading_one: "{n} reading",
  reading_other: "{n} reading",
  characters_left: "{n} characters left",
  tab_write: "Write",
  tab_preview: "Preview",
  preview_empty: "Nothing to preview yet.",
  preview_loading: "Rendering the preview…",
  formatting_help: "Formatting help",
  help_bold: "bold",
  help_italic: "italic",
  help_strike: "struck out",
  help_code: "code",
  help_quote: "a quote",
  help_list: "a list item",
  help_link: "a link",
  link: "Link",
  /** the fragment's line for a reader without JavaScript (src/modules/indexable/markup.ts) */
  comment_on_page: "Comment on the page itself, with JavaScript on",
  copy_link: "Copy link to comment",
  link_copied: "Link copied",
  link_not_copied: "The link could not be copied: {url}",
  permalink_missing: "The comment this link points to is not available. It may have been removed or be awaiting moderation.",
  from_start: "Show comments from the start",
  follow: "Follow",
  follow_on: "You follow this discussion: its new comments reach your notifications.",
  follow_off: "You no longer follow this discussion; replies to you still reach you.",
  bell: "Notifications",
  bell_unread_one: "Notifications, {n} unread",
  bell_unread_other: "Notifications, {n} unread",
  inbox_title: "Notifications",
  inbox_empty: "Nothing new for you yet.",
  inbox_reply: "{name} replied to you",
  inbox_new_comment: "{name} commented",
  inbox_new_comment_in: "{name} commented on {title}",
  inbox_mark_all: "Mark all as read",
  err_reader_banned: "You can no longer comment here.",
  err_reader_suspended: "You can comment again from {until}.",
  err_discussion_locked: "Comments are closed on this discussion.",
  err_discussion_archived: "This discussion is archived and can no longer be changed.",
  err_rate_limited: "You are going a little fast. Please wait a moment and try again.",
  err_edit_window_closed: "This comment can no longer be edited.",
  err_not_author: "Only the author can change this comment.",
  err_invalid_identity: "Your sign-in has expired. Please sign in again.",
  err_not_found: "This comment no longer exists.",
  err_discussion_missing: "Comments are not open on this page yet: the site has not set up its discussion.",
  err_report_own: "You cannot report your own comment.",
  err_votes_disabled: "Voting is off on this site.",
  err_empty: "Write something first.",
  err_too_long: "A comment can be at most {n} characters long.",
  err_network: "The comment service could not be reached. Check your connection and try again.",
  err_origin_not_allowed:
    "The comment service does not accept this page's origin, {origin}. The site's operator adds {origin} to the tenant's allowedOrigins (console: Settings, Allowed origins).",
  err_generic: "That did not work: {detail}",
};

export type Strings = typeof EN;
export type StringKey = keyof Strings;

/** the languages built in: English in thread.js, the others fetched when an element first needs them */
export const LANGUAGES = ["en", "de", "fr", "es", "pt", "it", "nl", "pl", "ja", "zh"] as const;
export type Language = (typeof LANGUAGES)[number];

/** A language tag's built-in language ("de-AT" → "de"), English when there is none. */
export function languageOf(tag: string | null | undefined): Language {
  const base = (tag ?? "").toLowerCase().split("-")[0] ?? "";
  return (LANGUAGES as readonly string[]).includes(base) ? (base as Language) : "en";
}

const loaded = new Map<Language, Strings>([["en", EN]]);
const loading = new Map<Language, Promise<unknown>>();

/** A language's strings once they are here (English always is); undefined while they load. */
export function stringsFor(language: Language): Strings | undefined {
  return loaded.get(language);
}

/**
 * Fetches a language's strings from `<origin>/embed/v1/i18n/<language>.json` (once per page); a
 * message the file lacks, or a file that cannot be read, is English.
 */
export function loadStrings(language: Language, origin: string): Promise<unknown> {
  let pending = loading.get(language);
  if (!pending) {
    pending = fetch(`${origin}/embed/v1/i18n/${language}.json`)
      .then((res) => (res.ok ? (res.json() as Promise<Partial<Strings>>) : {}))
      .catch(() => ({}))
      .then((words) => loaded.set(language, { ...EN, ...words }));
    loading.set(language, pending);
  }
  return pending;
}

/** A string with its `{name}` placeholders filled in. */
export function fill(template: string, values: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
