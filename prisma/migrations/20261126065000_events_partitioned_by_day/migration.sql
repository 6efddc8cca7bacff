-- The event log partitioned by range of occurred_at, one partition per UTC day (docs/scaling.md,
-- "The event log, partitioned by day"; the functions are prisma/sql/75-event-partitions.sql).
--
-- What Prisma's diff asked for (the webhook jobs' foreign key to events dropped, the primary key
-- (id, occurred_at), the index on (tenant_id, discussion_id, seq) no longer unique) is what
-- eng_partition_event_log leaves, on a partitioned table:
--  - an empty log (a new installation) is replaced by the partitioned table at once;
--  - a populated one becomes the partition of everything before a boundary. `engagement migrate` and
--    the server's start (src/db/migrate.ts) run src/db/event-log-partitioning.ts before this
--    migration: it builds the indexes and the CHECK that attach needs without blocking writers, and
--    makes the switch itself in short transactions, so that here there is nothing left to do. Run by
--    another tool (prisma migrate deploy), this builds them itself, holding the table meanwhile.
SELECT eng_partition_event_log();

-- the days around today (the retention job keeps a week ahead from then on)
SELECT eng_event_partitions_ahead(now(), 7);
