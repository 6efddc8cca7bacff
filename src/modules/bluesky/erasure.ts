// What an erasure of a Bluesky reader (`at:<did>`, docs/privacy.md, src/modules/readers/erasure.ts)
// changes besides what every reader's erasure does: their replies' rows in bluesky_replies lose the
// reply's URI (which names their DID) and the reader id, and keep the URI's sha256 alone, so that the
// next read of the thread (engine/sync.ts) knows each reply was here and does not bring it back.

/**
 * A member of the WITH of the erasure's last statement (`$1` the tenant, `$2` the reader id): the
 * reader's reply rows made anonymous. For a reader with none, nothing.
 */
export const FORGET_BLUESKY_ROWS = `forgotten_bluesky AS (
    UPDATE bluesky_replies SET uri = NULL, reader_id = NULL WHERE tenant_id = $1 AND reader_id = $2)`;
