-- The reader's row as a write records it: written only when the name or avatar it asserts changed.

CREATE OR REPLACE FUNCTION public.eng_reader_current(p_tenant text, p_reader text, p_name text, p_avatar text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  RETURN FOUND AND r.name IS NOT DISTINCT FROM p_name AND r.avatar_url IS NOT DISTINCT FROM p_avatar;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_touch_reader(p_tenant text, p_reader text, p_name text, p_avatar text, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT eng_reader_current(p_tenant, p_reader, p_name, p_avatar) THEN
    PERFORM eng_write_reader(p_tenant, p_reader, p_name, p_avatar, p_at);
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_write_reader(p_tenant text, p_reader text, p_name text, p_avatar text, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at)
  VALUES (p_tenant, p_reader, p_name, p_avatar, p_at, p_at) ON CONFLICT (tenant_id, id) DO NOTHING;
  IF NOT FOUND THEN
    UPDATE readers SET name = p_name, avatar_url = p_avatar, updated_at = p_at
     WHERE tenant_id = p_tenant AND id = p_reader
       AND (name IS DISTINCT FROM p_name OR avatar_url IS DISTINCT FROM p_avatar);
  END IF;
END $function$;

-- The reader's badge (contract section 21) as an assertion's `badge` claim gives it: a moderator's
-- badge (badge_source 'moderator', PATCH /readers/{id}) wins until cleared; otherwise the claim is the
-- badge, and an assertion without one clears the one an earlier claim gave. Answers the badge in force.
CREATE OR REPLACE FUNCTION public.eng_claim_badge(p_tenant text, p_reader text, p_badge text, p_at timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
-- nullable: p_badge
DECLARE
  r readers;
BEGIN
  SELECT * INTO r FROM readers WHERE tenant_id = p_tenant AND id = p_reader;
  IF NOT FOUND THEN RETURN p_badge; END IF;
  IF r.badge_source = 'moderator' THEN RETURN r.badge; END IF;
  IF r.badge IS DISTINCT FROM p_badge THEN
    UPDATE readers SET badge = p_badge, badge_source = CASE WHEN p_badge IS NULL THEN NULL ELSE 'claim' END, updated_at = p_at
     WHERE tenant_id = p_tenant AND id = p_reader;
  END IF;
  RETURN p_badge;
END $function$;

CREATE OR REPLACE FUNCTION public.eng_reader_sanctioned_until()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
-- After a reader's row is inserted, whoever inserts it (a post, a sign-in, an import, an email
-- preference…): until when a sanction of theirs may be in force (readers.sanctioned_until, which a
-- post reads with the reader's row, looking for the sanction only then). A sanction outlives its
-- reader's erasure, which deletes the row: a row made again after one carries it. After the insert
-- (an upsert that finds the row runs nothing), and a write only when there is a sanction.
BEGIN
  UPDATE readers r SET sanctioned_until = s.until
    FROM (SELECT max(COALESCE(x.until, 'infinity')) AS until FROM reader_sanctions x
           WHERE x.tenant_id = NEW.tenant_id AND x.reader_id = NEW.id AND x.lifted_at IS NULL) s
   WHERE s.until IS NOT NULL AND r.tenant_id = NEW.tenant_id AND r.id = NEW.id;
  RETURN NULL;
END $function$;
