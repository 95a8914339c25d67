-- The journal's index on pending alone is dropped: every journaled
-- message wrote an entry into it, and no statement needs it. The few
-- reads of all pending messages (a start's recovery, the orphan sweep,
-- dump) scan neo_inbound_pending_thread instead, which holds the same
-- rows (those still pending), and sort them (docs/scaling.md).
DROP INDEX IF EXISTS neo_inbound_pending;

-- A thread's row is updated twice a turn (its activity when a message is
-- journaled, its last entry number with the append). Room left in each
-- page lets PostgreSQL write the new version beside the old one without
-- touching the primary key's index (a HOT update); new pages get it.
ALTER TABLE neo_threads SET (fillfactor = 70);
