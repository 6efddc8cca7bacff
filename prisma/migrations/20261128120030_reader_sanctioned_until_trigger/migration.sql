-- Every reader's row, whoever inserts it, is given until when a sanction of theirs may be in force
-- (eng_reader_sanctioned_until, prisma/sql/10-readers.sql): a sanction outlives its reader's erasure.
CREATE TRIGGER readers_sanctioned_until AFTER INSERT ON "readers"
  FOR EACH ROW EXECUTE FUNCTION eng_reader_sanctioned_until();
