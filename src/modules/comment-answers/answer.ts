// A comment as REST answers it to the caller: its shape as the caller is shown it (comments/dto.ts,
// shapeShown: the JSON events carry, made anew), then `myVote` with an identity assertion
// (votes/viewer.ts), then `moderationReason` for moderate_content when a rule or a moderator gave one
// (comments/visibility.ts). Each member comes from the function GraphQL's Comment field of the same
// name resolves from; this room only puts them together, once a comment, for REST's answers.
import type { RequestContext } from "../../context/request.js";
import type { CommentJson } from "../../events/write-results.js";
import { shapeShown, type CommentWithAuthor } from "../comments/dto.js";
import { canModerate, shownModerationReason } from "../comments/visibility.js";
import { assertsReader, myVote } from "../votes/viewer.js";

/** The REST answer's comment: the shown shape, and the two members only some callers get. */
export type AnsweredComment = CommentJson & { myVote?: number; moderationReason?: unknown };

/**
 * The comment's REST answer; a promise only when the request asserts a reader (its vote is read then,
 * one statement for every comment of the request: votes/viewer.ts).
 */
export function answeredComment(ctx: RequestContext, c: CommentWithAuthor): AnsweredComment | Promise<AnsweredComment> {
  // made for this answer alone (not kept): the two members go on it as they are, in this order
  const answer: AnsweredComment = shapeShown(c, canModerate(ctx));
  return assertsReader(ctx) ? withVote(ctx, c, answer) : withReason(ctx, c, answer);
}

/** A page's answers: an array, or a promise of one when the request asserts a reader (their votes are read). */
export function answeredComments(ctx: RequestContext, comments: CommentWithAuthor[]): AnsweredComment[] | Promise<AnsweredComment[]> {
  const moderator = canModerate(ctx);
  if (!assertsReader(ctx)) return comments.map((c) => withReason(ctx, c, shapeShown(c, moderator)));
  return Promise.all(comments.map((c) => withVote(ctx, c, shapeShown(c, moderator))));
}

async function withVote(ctx: RequestContext, c: CommentWithAuthor, answer: AnsweredComment): Promise<AnsweredComment> {
  const vote = await myVote(ctx, c);
  if (vote !== null) answer.myVote = vote;
  return withReason(ctx, c, answer);
}

function withReason(ctx: RequestContext, c: CommentWithAuthor, answer: AnsweredComment): AnsweredComment {
  const reason = shownModerationReason(ctx, c);
  if (reason !== null) answer.moderationReason = reason;
  return answer;
}
