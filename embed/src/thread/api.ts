// How <engagement-thread> talks to the service: GraphQL over fetch for reads and the reader's
// writes (the same operations and rules as every other client: contract sections 4, 6, 7 and 12),
// stream tickets, the inbox and following from REST, and errors as codes the element turns into readable messages.
// Requests carry the publishable key, the reader's identity when there is one, never cookies.
import type { Comment, CommentWithReplies, DiscussionState, Page, Sort } from "./store.js";

const COMMENT = `id parentId author { id name avatarUrl badge } body bodyHtml status kind pinned editedAt createdAt reactions: reactionMap viewerReactions replyCount score upvotes downvotes myVote`;
const PAGE_INFO = `pageInfo { hasNextPage endCursor }`;
/** top-level comments with their first replies: one request shows a thread two levels deep */
const TOP_PAGE = `edges { node { ${COMMENT} replies(first: 5) { edges { node { ${COMMENT} } } ${PAGE_INFO} } } } ${PAGE_INFO}`;

// the discussion as the page's own statement read it: its count and seq agree with the page (events after seq are new to it)
const THREAD = `query EmbedThread($d: String!, $sort: CommentSort, $after: String) {
  comments(discussionId: $d, topLevel: true, sort: $sort, first: 20, after: $after) {
    discussion { state commentCount seq reactions: reactionMap myReactions bluesky { url } } ${TOP_PAGE}
  }
}`;
const BASICS = `query EmbedBasics { viewer { id name avatarUrl } readerSettings { reactionKinds pageReactionKinds editWindowSeconds maxBodyLength votes signInUrl signInMethods } }`;
const MORE = `query EmbedMore($d: String!, $sort: CommentSort, $after: String) {
  comments(discussionId: $d, topLevel: true, sort: $sort, first: 20, after: $after) { ${TOP_PAGE} }
}`;
const REPLIES = `query EmbedReplies($d: String!, $p: String!, $after: String) {
  comments(discussionId: $d, parentId: $p, sort: oldest, first: 20, after: $after) { edges { node { ${COMMENT} } } ${PAGE_INFO} }
}`;
/** An item of the reader's inbox (its bell's list): a reply to them, or a new comment in a discussion they follow. */
export interface InboxItem {
  id: string;
  type: "reply" | "new_comment";
  discussionId: string;
  discussionTitle: string | null;
  discussionUrl?: string | null;
  comment: Comment;
  parent?: Comment | null;
  createdAt: string;
  readAt: string | null;
}

const POST = `mutation EmbedPost($d: String!, $input: PostCommentInput!) { postComment(discussionId: $d, input: $input) { ${COMMENT} } }`;
const EDIT = `mutation EmbedEdit($id: String!, $input: EditCommentInput!) { editComment(id: $id, input: $input) { ${COMMENT} } }`;
const DELETE = `mutation EmbedDelete($id: String!) { deleteComment(id: $id) { ${COMMENT} } }`;
const REACT = `mutation EmbedReact($id: String!, $input: ToggleReactionInput!) { toggleReaction(commentId: $id, input: $input) { kind active countMap } }`;
const REACT_PAGE = `mutation EmbedReactPage($d: String!, $input: ToggleDiscussionReactionInput!) { toggleDiscussionReaction(discussionId: $d, input: $input) { kind active countMap } }`;
const CONTEXT = `query EmbedContext($id: ID!, $sort: CommentSort) {
  commentContext(id: $id, sort: $sort, topLevel: true) { comment { ${COMMENT} } ancestors { ${COMMENT} } rootCursor }
}`;
const PAGE = `query EmbedPage($url: String!) { discussion(url: $url) { id } }`;
const PREVIEW = `query EmbedPreview($body: String!) { preview(body: $body) { bodyHtml } }`;
const VOTE = `mutation EmbedVote($id: String!, $input: VoteInput!) { vote(commentId: $id, input: $input) { value score upvotes downvotes } }`;
const INBOX = `query EmbedInbox($first: Int) { myInbox(first: $first) { unreadCount edges { node {
  id type discussionId discussionTitle discussionUrl comment { ${COMMENT} } createdAt readAt } } } }`;
const REPORT = `mutation EmbedReport($id: String!, $input: ReportCommentInput!) { reportComment(id: $id, input: $input) { created } }`;

/**
 * A refusal or failure, with the service's stable code: "network" when the service could not be
 * reached, "origin_not_allowed" when it answers but not to this page's origin.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface Viewer {
  id: string;
  name: string;
  avatarUrl: string | null;
}

export interface ReaderSettings {
  reactionKinds: string[];
  /** reactions on the discussion itself; empty: the element shows no page reactions */
  pageReactionKinds: string[];
  editWindowSeconds: number;
  maxBodyLength: number;
  /** votes on comments: off, up (upvotes only) or updown */
  votes: "off" | "up" | "updown";
  /** the service's hosted sign-in page (a path on the API base when PUBLIC_URL is unset); null: off */
  signInUrl: string | null;
  /** the hosted sign-in's methods: with `passkey`, a signed-in reader may add a passkey */
  signInMethods: string[];
}

/** A vote as it now stands, with the comment's tallies. */
export interface VoteTally {
  value: number;
  score: number;
  upvotes: number;
  downvotes: number;
}

/** A permalink's comment, the comments it answers (top-level first) and the cursor of the page that begins with its thread. */
export interface CommentContext {
  comment: Comment;
  ancestors: Comment[];
  rootCursor: string;
}

export interface ThreadPage {
  /** null: no such discussion yet (its first comment creates it) */
  discussion: {
    state: DiscussionState;
    commentCount: number;
    /** the discussion's event seq when the page was read: the stream's events up to it are in the page */
    seq: number;
    reactions: Record<string, number>;
    myReactions: string[] | null;
    /** the Bluesky post the discussion is linked to (contract section 30): where its bluesky comments came from */
    bluesky?: { url: string | null } | null;
  } | null;
  comments: Page<CommentWithReplies>;
}

/**
 * The page the element is on, as a discussion its first comment creates would have it: the
 * canonical URL when the page names one on its own origin (else its address without the fragment),
 * and its title on one line, at most 500 characters.
 */
function thisPage(): { url: string; title?: string } {
  const canonical = document.querySelector<HTMLLinkElement>('link[rel="canonical"]')?.href;
  let url = `${location.origin}${location.pathname}${location.search}`;
  try {
    if (canonical && new URL(canonical).origin === location.origin) url = new URL(canonical).href.replace(/#.*$/, "");
  } catch {
    /* not a URL: the page's own address */
  }
  const title = document.title.replace(/\s+/g, " ").trim().slice(0, 500);
  return title ? { url, title } : { url };
}

const EMPTY_PAGE: Page<CommentWithReplies> = { edges: [], pageInfo: { hasNextPage: false, endCursor: null } };

export class ThreadApi {
  /** told when the service refuses the identity a request carried (401 invalid_identity) */
  refused: (identity: string) => void = () => {};
  /**
   * The last X-Service-Consistency a write's answer carried, sent with every later request: a read
   * then sees the reader's own writes even when a read replica serves it (contract section 26).
   */
  private consistency: string | null = null;

  constructor(
    readonly base: string,
    readonly key: string,
  ) {}

  /**
   * The first page of a discussion (or the page at `after`); an unknown discussion (nobody has
   * commented yet) is an empty one.
   */
  async thread(discussionId: string, sort: Sort, identity: string | null, after: string | null = null): Promise<ThreadPage> {
    try {
      const { comments } = await this.graphql<{ comments: Page<CommentWithReplies> & { discussion: ThreadPage["discussion"] } }>(
        THREAD,
        { d: discussionId, sort, after },
        identity,
      );
      const { discussion, ...page } = comments;
      return { discussion, comments: page };
    } catch (e) {
      if (e instanceof ServiceError && e.code === "not_found") return { discussion: null, comments: EMPTY_PAGE };
      throw e;
    }
  }

  /** The id of the discussion whose url is the page's (compared normalized); null when none has it yet. */
  async discussionByUrl(url: string): Promise<string | null> {
    try {
      return (await this.graphql<{ discussion: { id: string } }>(PAGE, { url }, null)).discussion.id;
    } catch (e) {
      if (e instanceof ServiceError && e.code === "not_found") return null;
      throw e;
    }
  }

  basics(identity: string | null): Promise<{ viewer: Viewer | null; readerSettings: ReaderSettings }> {
    return this.graphql(BASICS, {}, identity);
  }

  async more(discussionId: string, sort: Sort, after: string, identity: string | null): Promise<Page<CommentWithReplies>> {
    return (await this.graphql<{ comments: Page<CommentWithReplies> }>(MORE, { d: discussionId, sort, after }, identity)).comments;
  }

  async replies(discussionId: string, parentId: string, after: string | null, identity: string | null): Promise<Page<Comment>> {
    return (await this.graphql<{ comments: Page<Comment> }>(REPLIES, { d: discussionId, p: parentId, after }, identity)).comments;
  }

  /** A comment's permalink context for the first level's list; null when there is no such comment the reader may see. */
  async context(id: string, sort: Sort, identity: string | null): Promise<CommentContext | null> {
    try {
      return (await this.graphql<{ commentContext: CommentContext }>(CONTEXT, { id, sort }, identity)).commentContext;
    } catch (e) {
      if (e instanceof ServiceError && e.code === "not_found") return null;
      throw e;
    }
  }

  /** A body as the service would show it (its sanitized HTML); refused as a post would be. */
  async preview(body: string, identity: string | null): Promise<string> {
    return (await this.graphql<{ preview: { bodyHtml: string } }>(PREVIEW, { body }, identity)).preview.bodyHtml;
  }

  /**
   * Posts as the reader; the idempotency key makes a retried post (a lost answer) post once. A
   * first-level comment says which page it comes from: the first one creates the discussion with
   * that URL and title, where the site lets pages do so (settings discussions.autoCreate).
   */
  async post(discussionId: string, body: string, parentId: string | null, identity: string, idempotencyKey: string): Promise<Comment> {
    const input = parentId ? { body, parentId } : { body, discussion: thisPage() };
    return (await this.graphql<{ postComment: Comment }>(POST, { d: discussionId, input }, identity, idempotencyKey)).postComment;
  }

  async edit(id: string, body: string, identity: string): Promise<Comment> {
    return (await this.graphql<{ editComment: Comment }>(EDIT, { id, input: { body } }, identity)).editComment;
  }

  async remove(id: string, identity: string): Promise<Comment> {
    return (await this.graphql<{ deleteComment: Comment }>(DELETE, { id }, identity)).deleteComment;
  }

  async react(id: string, kind: string, identity: string): Promise<{ kind: string; active: boolean; countMap: Record<string, number> }> {
    return (
      await this.graphql<{ toggleReaction: { kind: string; active: boolean; countMap: Record<string, number> } }>(
        REACT,
        { id, input: { kind } },
        identity,
      )
    ).toggleReaction;
  }

  /** Toggles the reader's page reaction (on the discussion itself). */
  async reactPage(
    discussionId: string,
    kind: string,
    identity: string,
  ): Promise<{ kind: string; active: boolean; countMap: Record<string, number> }> {
    return (
      await this.graphql<{ toggleDiscussionReaction: { kind: string; active: boolean; countMap: Record<string, number> } }>(
        REACT_PAGE,
        { d: discussionId, input: { kind } },
        identity,
      )
    ).toggleDiscussionReaction;
  }

  async vote(id: string, value: number, identity: string): Promise<VoteTally> {
    return (await this.graphql<{ vote: VoteTally }>(VOTE, { id, input: { value } }, identity)).vote;
  }

  async report(id: string, reason: string, note: string, identity: string): Promise<void> {
    await this.graphql(REPORT, { id, input: note ? { reason, note } : { reason } }, identity);
  }

  /** The reader's latest inbox items and unread count (GraphQL: its items carry their discussion's address). */
  async inbox(first: number, identity: string): Promise<{ items: InboxItem[]; unreadCount: number }> {
    const { myInbox } = await this.graphql<{ myInbox: { unreadCount: number; edges: { node: InboxItem }[] } }>(INBOX, { first }, identity);
    return { items: myInbox.edges.map((e) => e.node), unreadCount: myInbox.unreadCount };
  }

  /** A one-connection stream ticket (contract section 4), bound to the reader when there is one. */
  async ticket(discussionId: string, identity: string | null): Promise<string> {
    return (await this.rest<{ ticket: string }>("POST", "/stream/ticket", { discussionId }, identity)).ticket;
  }

  /** A ticket for the reader's own stream (`/stream/me`, contract section 19). */
  async meTicket(identity: string): Promise<string> {
    return (await this.rest<{ ticket: string }>("POST", "/stream/ticket", { scope: "me" }, identity)).ticket;
  }

  /** A discussion's stream (`discussionId`) or the reader's own (null). */
  streamUrl(discussionId: string | null, ticket: string, lastEventId: string | null): string {
    const url = new URL(`${this.base}/api/v1/stream/${discussionId === null ? "me" : encodeURIComponent(discussionId)}`);
    url.searchParams.set("ticket", ticket);
    if (lastEventId) url.searchParams.set("lastEventId", lastEventId);
    return url.toString();
  }

  /** Ends a hosted sign-in's session (POST /api/v1/me/sign-out → 204); whether the service took it (a refused token is over too). */
  async signOut(token: string): Promise<void> {
    const res = await this.send(`${this.base}/api/v1/me/sign-out`, undefined, token);
    if (!res.ok && res.status !== 401) throw new ServiceError("unavailable", `HTTP ${res.status}`);
  }

  /** A REST route of the contract (`path` under /api/v1) as the reader: its answer, or a ServiceError with the problem's code. */
  async rest<T>(method: "GET" | "POST" | "PUT", path: string, body: unknown, identity: string | null): Promise<T> {
    const res = await this.send(
      `${this.base}/api/v1${path}`,
      body === undefined ? undefined : JSON.stringify(body),
      identity,
      undefined,
      method,
    );
    const answer = (await res.json().catch(() => null)) as (T & { code?: string; detail?: string }) | null;
    if (!res.ok || answer === null) {
      if (identity && answer?.code === "invalid_identity") this.refused(identity);
      throw new ServiceError(answer?.code ?? "unavailable", answer?.detail ?? `HTTP ${res.status}`);
    }
    return answer;
  }

  private async graphql<T>(
    query: string,
    variables: Record<string, unknown>,
    identity: string | null,
    idempotencyKey?: string,
  ): Promise<T> {
    const res = await this.send(`${this.base}/graphql`, JSON.stringify({ query, variables }), identity, idempotencyKey);
    const body = (await res.json().catch(() => null)) as {
      data?: T | null;
      errors?: { message: string; extensions?: Record<string, unknown> }[];
      code?: string;
      detail?: string;
    } | null;
    const error = body?.errors?.[0];
    if (identity && (error?.extensions?.code ?? body?.code) === "invalid_identity") this.refused(identity);
    if (error)
      throw new ServiceError(String(error.extensions?.code ?? "internal_error"), error.message, {
        origin: location.origin,
        ...(error.extensions ?? {}),
      });
    if (!res.ok || !body?.data) throw new ServiceError(body?.code ?? "unavailable", body?.detail ?? `HTTP ${res.status}`);
    return body.data;
  }

  private async send(
    url: string,
    body: string | undefined,
    identity: string | null,
    idempotencyKey?: string,
    method: "GET" | "POST" | "PUT" = "POST",
  ): Promise<Response> {
    const headers: Record<string, string> = { "X-API-Key": this.key };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (identity) headers["X-Service-Identity"] = identity;
    if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
    if (this.consistency) headers["X-Service-Consistency"] = this.consistency;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body, credentials: "omit", mode: "cors" });
    } catch {
      throw await this.unreachable();
    }
    this.consistency = res.headers.get("X-Service-Consistency") ?? this.consistency;
    return res;
  }

  /**
   * Why a request failed before any answer: a browser hides a refused CORS preflight (an origin no
   * tenant lists) behind the same error as a network failure. A no-cors GET of /healthz tells them
   * apart: it succeeds, opaque, whenever the service is reachable.
   */
  private async unreachable(): Promise<ServiceError> {
    const origin = location.origin;
    const reachable = await fetch(`${this.base}/healthz`, { mode: "no-cors", credentials: "omit", cache: "no-store" }).then(
      () => true,
      () => false,
    );
    return reachable
      ? new ServiceError("origin_not_allowed", `The origin ${origin} is not in this tenant's allowedOrigins.`, { origin })
      : new ServiceError("network", "The comment service could not be reached.");
  }
}
