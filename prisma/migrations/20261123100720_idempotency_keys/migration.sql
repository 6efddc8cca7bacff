-- CreateTable
CREATE TABLE "idempotency_keys" (
    "tenant_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "results" JSONB NOT NULL DEFAULT '[]',
    "status" INTEGER,
    "response" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id","key")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- A write made under an Idempotency-Key records its result in its own transaction: the same
-- statement or transaction as the write calls this with the result, which is appended to the key's
-- results while the request that calls it still owns the key. When another request has taken the
-- key over (the first was given up as dead), the write is refused and its transaction rolls back,
-- so a write never happens twice for one key. Returns the result it was given.
CREATE FUNCTION eng_idempotency_record(p_tenant text, p_key text, p_owner text, p_result json)
RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  UPDATE idempotency_keys
     SET results = results || jsonb_build_array(p_result::jsonb)
   WHERE tenant_id = p_tenant AND key = p_key AND owner = p_owner AND status IS NULL;
  IF NOT FOUND THEN
    PERFORM eng_refuse('409', 'idempotency_in_progress',
      'Another request with this Idempotency-Key took it over; this one was not applied.');
  END IF;
  RETURN p_result;
END $$;
