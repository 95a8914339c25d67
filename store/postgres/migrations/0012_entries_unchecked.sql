-- Transcript entries no longer reference their thread's row: checking it
-- cost two lookups a turn, 6-10% of the database's CPU in the
-- load benchmark (docs/scaling.md). Every write of an entry upserts its
-- thread's row in the same statement, and whatever deletes a thread
-- (DeleteThread, the retention sweep) deletes its row first, then its
-- entries, in one transaction: an append waiting on the row comes after.
ALTER TABLE neo_entries DROP CONSTRAINT IF EXISTS neo_entries_thread_fkey;
