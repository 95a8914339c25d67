-- The run of neobot (one process, from start to stop) that began each
-- call of the calls log: a call found begun by an earlier run was cut off
-- by a stop, one begun by the same run was not ('' for calls begun before
-- runs were recorded).
ALTER TABLE neo_calls ADD COLUMN run text NOT NULL DEFAULT '';
