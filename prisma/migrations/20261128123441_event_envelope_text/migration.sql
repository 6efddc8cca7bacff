-- The event log's envelope as text (docs/scaling.md, "The envelope as text"): a write stores the
-- envelope it built without the database parsing it (a json column validates every insert). Adding a
-- nullable column and dropping a NOT NULL are catalogue changes on the partitioned table and its
-- partitions: no rewrite, no scan. Rows written before keep their `payload`; readers take
-- eng_event_envelope's COALESCE until the retention job has dropped those days.
-- AlterTable
ALTER TABLE "events" ADD COLUMN     "envelope" TEXT,
ALTER COLUMN "payload" DROP NOT NULL;
