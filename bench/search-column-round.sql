-- One round of bench/search-column.sql's variants (search-column-variant.sql each).
\set variant 'INSERT of the comment, the table as it is'
\set ddl 'SET LOCAL synchronous_commit = on'
\set rows inserts
\ir search-column-variant.sql
\set variant 'INSERT of its search document (the projector''s, after the commit)'
\set ddl 'SET LOCAL synchronous_commit = on'
\set rows documents
\ir search-column-variant.sql
\set variant 'INSERT of its search document without the GIN index'
\set ddl 'DROP INDEX comment_search_vector_idx'
\set rows documents
\ir search-column-variant.sql
