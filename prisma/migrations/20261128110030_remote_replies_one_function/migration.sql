-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text): dropped
-- eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text): dropped
-- eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text): new

DROP FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_remote_object text, p_remote_actor text);

DROP FUNCTION public.eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text);

CREATE OR REPLACE FUNCTION public.eng_post_remote_comment(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_network text, p_remote_id text, p_remote_actor text, p_remote_hash text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at, p_remote_actor, p_remote_hash
-- A reply from another network, posted as eng_post_comment posts a comment, and in the same statement
-- the row that ties it to its original, so that it is never brought in twice (one held already is
-- refused, and nothing is written). A function of its own, so that a local post's statement is not
-- longer. p_network:
--   fediverse: a remote Note (the inbox, contract section 24): p_remote_id its id, p_remote_actor its
--              actor, kept in federation_objects;
--   bluesky:   a reply to a linked post (src/modules/bluesky/, contract section 30), of kind bluesky:
--              p_remote_id its at:// URI, p_remote_hash the URI's sha256 (which outlives an erasure),
--              kept in bluesky_replies.
DECLARE
  v_result json;
BEGIN
  v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, p_badge, p_body, p_body_html, p_parent,
                               p_status, p_reason, p_trusted_status, p_trusted_reason, p_hold, p_at,
                               CASE WHEN p_network = 'bluesky' THEN 'bluesky' ELSE p_kind END, p_created_at);
  IF p_network = 'bluesky' THEN
    INSERT INTO bluesky_replies (tenant_id, uri_hash, uri, discussion_id, comment_id, reader_id, created_at)
    VALUES (p_tenant, p_remote_hash, p_remote_id, p_discussion, p_id, p_reader, p_at)
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, reader_id, actor_id, created_at)
    VALUES (p_tenant, p_remote_id, 'note', p_id, p_reader, p_remote_actor, p_at)
    ON CONFLICT DO NOTHING;
  END IF;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'remote_object_held', 'The remote object is held already.');
  END IF;
  RETURN v_result;
END $function$;
