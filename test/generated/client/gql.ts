/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query ClientComments($discussionId: String!, $first: Int, $after: String) {\n  comments(\n    discussionId: $discussionId\n    first: $first\n    after: $after\n    sort: oldest\n  ) {\n    edges {\n      cursor\n      node {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n        reactions {\n          kind\n          count\n        }\n        viewerReactions\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nmutation ClientToggleReaction($commentId: String!, $kind: String!) {\n  toggleReaction(commentId: $commentId, input: {kind: $kind}) {\n    kind\n    active\n    comment {\n      id\n      reactions {\n        kind\n        count\n      }\n      viewerReactions\n    }\n  }\n}\n\nsubscription ClientDiscussionEvents($discussionId: String!, $ticket: String) {\n  discussionEvents(discussionId: $discussionId, ticket: $ticket) {\n    __typename\n    ... on StreamEvent {\n      seq\n      type\n      payload {\n        __typename\n        ... on CommentEventData {\n          comment {\n            id\n            body\n          }\n        }\n        ... on ReactionEventData {\n          reaction {\n            commentId\n            kind\n            active\n          }\n        }\n      }\n    }\n  }\n}": typeof types.ClientCommentsDocument,
};
const documents: Documents = {
    "query ClientComments($discussionId: String!, $first: Int, $after: String) {\n  comments(\n    discussionId: $discussionId\n    first: $first\n    after: $after\n    sort: oldest\n  ) {\n    edges {\n      cursor\n      node {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n        reactions {\n          kind\n          count\n        }\n        viewerReactions\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nmutation ClientToggleReaction($commentId: String!, $kind: String!) {\n  toggleReaction(commentId: $commentId, input: {kind: $kind}) {\n    kind\n    active\n    comment {\n      id\n      reactions {\n        kind\n        count\n      }\n      viewerReactions\n    }\n  }\n}\n\nsubscription ClientDiscussionEvents($discussionId: String!, $ticket: String) {\n  discussionEvents(discussionId: $discussionId, ticket: $ticket) {\n    __typename\n    ... on StreamEvent {\n      seq\n      type\n      payload {\n        __typename\n        ... on CommentEventData {\n          comment {\n            id\n            body\n          }\n        }\n        ... on ReactionEventData {\n          reaction {\n            commentId\n            kind\n            active\n          }\n        }\n      }\n    }\n  }\n}": types.ClientCommentsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ClientComments($discussionId: String!, $first: Int, $after: String) {\n  comments(\n    discussionId: $discussionId\n    first: $first\n    after: $after\n    sort: oldest\n  ) {\n    edges {\n      cursor\n      node {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n        reactions {\n          kind\n          count\n        }\n        viewerReactions\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nmutation ClientToggleReaction($commentId: String!, $kind: String!) {\n  toggleReaction(commentId: $commentId, input: {kind: $kind}) {\n    kind\n    active\n    comment {\n      id\n      reactions {\n        kind\n        count\n      }\n      viewerReactions\n    }\n  }\n}\n\nsubscription ClientDiscussionEvents($discussionId: String!, $ticket: String) {\n  discussionEvents(discussionId: $discussionId, ticket: $ticket) {\n    __typename\n    ... on StreamEvent {\n      seq\n      type\n      payload {\n        __typename\n        ... on CommentEventData {\n          comment {\n            id\n            body\n          }\n        }\n        ... on ReactionEventData {\n          reaction {\n            commentId\n            kind\n            active\n          }\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query ClientComments($discussionId: String!, $first: Int, $after: String) {\n  comments(\n    discussionId: $discussionId\n    first: $first\n    after: $after\n    sort: oldest\n  ) {\n    edges {\n      cursor\n      node {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n        reactions {\n          kind\n          count\n        }\n        viewerReactions\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nmutation ClientToggleReaction($commentId: String!, $kind: String!) {\n  toggleReaction(commentId: $commentId, input: {kind: $kind}) {\n    kind\n    active\n    comment {\n      id\n      reactions {\n        kind\n        count\n      }\n      viewerReactions\n    }\n  }\n}\n\nsubscription ClientDiscussionEvents($discussionId: String!, $ticket: String) {\n  discussionEvents(discussionId: $discussionId, ticket: $ticket) {\n    __typename\n    ... on StreamEvent {\n      seq\n      type\n      payload {\n        __typename\n        ... on CommentEventData {\n          comment {\n            id\n            body\n          }\n        }\n        ... on ReactionEventData {\n          reaction {\n            commentId\n            kind\n            active\n          }\n        }\n      }\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;