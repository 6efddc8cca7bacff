-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "sanctioned_until" TIMESTAMPTZ(3);

-- the sanction in force of each reader (one at a time: eng_ban_reader lifts the one before), as the
-- post's first statement read it from reader_sanctions before this column
UPDATE "readers" r SET "sanctioned_until" = COALESCE(s."until", 'infinity')
  FROM "reader_sanctions" s
 WHERE s."tenant_id" = r."tenant_id" AND s."reader_id" = r."id" AND s."lifted_at" IS NULL
   AND (s."until" IS NULL OR s."until" > now());
