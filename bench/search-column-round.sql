-- One round of bench/search-column.sql's variants (search-column-variant.sql each).
\set variant 'INSERT, the table as it is'
\set ddl 'SET LOCAL synchronous_commit = on'
\ir search-column-variant.sql
\set variant 'INSERT without the GIN index'
\set ddl 'DROP INDEX comments_search_idx'
\ir search-column-variant.sql
\set variant 'INSERT without the search column (nor its index)'
\set ddl 'ALTER TABLE comments DROP COLUMN search_vector'
\ir search-column-variant.sql
