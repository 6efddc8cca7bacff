// The PostgreSQL extensions the migrations create (CREATE EXTENSION), which the embedded database
// (PGlite) must load itself: each is a WebAssembly module shipped with @electric-sql/pglite, loaded
// when a database opens. Every PGlite of the project is made with these (the server's embedded
// database, the migration and function tools' shadow databases, the tests' templates): a database
// whose generated column calls unaccent cannot even insert a comment without it.
// unaccent: comment search (migration *_comment_search, src/modules/comments/search.ts).
import type { PGliteOptions } from "@electric-sql/pglite";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";

export const pgliteExtensions = { unaccent } satisfies NonNullable<PGliteOptions["extensions"]>;
