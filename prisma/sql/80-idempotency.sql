-- A write's result recorded for the request's Idempotency-Key, in the write's own statement.

CREATE OR REPLACE FUNCTION public.eng_idempotency_record(p_tenant text, p_key text, p_owner text, p_result json)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE idempotency_keys
     SET results = results || jsonb_build_array(p_result::jsonb)
   WHERE tenant_id = p_tenant AND key = p_key AND owner = p_owner AND status IS NULL;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'idempotency_in_progress',
      'Another request with this Idempotency-Key took it over; this one was not applied.');
  END IF;
  RETURN p_result;
END $function$;
