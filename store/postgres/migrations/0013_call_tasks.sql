-- The MCP task a call became (a long-running tool answered with a task):
-- a turn resumed after a restart follows it instead of calling the tool
-- again ('' for a call that is no task).
ALTER TABLE neo_calls ADD COLUMN task text NOT NULL DEFAULT '';
