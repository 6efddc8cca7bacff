// A comment as REST answers it to the caller: its shape as the caller is shown it (comments/dto.ts,
// shapeShown: the JSON events carry, made anew), then `myVote` with an identity assertion
// (votes/viewer.ts), then `moderationReason` for moderate_content when a rule or a moderator gave one
// (comments/visibility.ts). Each member comes from the function GraphQL's Comment field of the same
// name resolves from; this room only puts them together, once a comment, for REST's answers.
import type { RequestContext } from "../../context/request.js";
import type { CommentJson } from "../../events/write-results.js";
import { shapeShown, type CommentWithAuthor } from "../comments/dto.js";
import { canModerate, shownModerationReason } from "../comments/visibility.js";
import { myVote } from "../votes/viewer.js";

/** The REST answer's comment: the shown shape, and the two members only some callers get. */
export type AnsweredComment = CommentJson & { myVote?: number; moderationReason?: unknown };

export async function answeredComment(ctx: RequestContext, c: CommentWithAuthor): Promise<AnsweredComment> {
  // made for this answer alone (not kept): the two members go on it as they are
  const answer: AnsweredComment = shapeShown(c, canModerate(ctx));
  const vote = await myVote(ctx, c);
  const reason = shownModerationReason(ctx, c);
  if (vote !== null) answer.myVote = vote;
  if (reason !== null) answer.moderationReason = reason;
  return answer;
}
