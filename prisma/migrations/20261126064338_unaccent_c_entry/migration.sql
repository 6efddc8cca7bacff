-- Database functions, written by `npm run functions:migrate` from prisma/sql (their source):
-- eng_unaccent(p_text text): changed

CREATE OR REPLACE FUNCTION public.eng_unaccent(p_text text)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS '$libdir/unaccent', $function$unaccent_dict$function$;
