-- One variant of bench/search-column.sql: :ddl applied, 20,000 rows of :rows timed, all of it rolled back.
BEGIN;
:ddl;
SELECT pg_temp.:rows(20000, 'v') AS us \gset
ROLLBACK;
INSERT INTO search_cost (variant, us) VALUES (:'variant', :us);
