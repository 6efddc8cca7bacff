-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text): new

CREATE OR REPLACE FUNCTION public.eng_post_bluesky_reply(p_tenant text, p_discussion text, p_id text, p_reader text, p_name text, p_avatar text, p_badge text, p_body text, p_body_html text, p_parent text, p_status text, p_reason jsonb, p_trusted_status text, p_trusted_reason jsonb, p_hold integer, p_at timestamp with time zone, p_kind text, p_created_at timestamp with time zone, p_uri text, p_uri_hash text)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
-- nullable: p_avatar, p_badge, p_parent, p_reason, p_trusted_reason, p_kind, p_created_at
-- p_kind is taken for the shape of eng_post_comment's arguments; the comment is always of kind bluesky
DECLARE
  v_result json;
BEGIN
  v_result := eng_post_comment(p_tenant, p_discussion, p_id, p_reader, p_name, p_avatar, p_badge, p_body, p_body_html, p_parent,
                               p_status, p_reason, p_trusted_status, p_trusted_reason, p_hold, p_at, 'bluesky', p_created_at);
  INSERT INTO bluesky_replies (tenant_id, uri_hash, uri, discussion_id, comment_id, reader_id, created_at)
  VALUES (p_tenant, p_uri_hash, p_uri, p_discussion, p_id, p_reader, p_at)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'remote_object_held', 'The remote object is held already.');
  END IF;
  RETURN v_result;
END $function$;
