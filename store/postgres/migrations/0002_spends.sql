-- The spend ledger: one row per planned call of a spend-class tool, kept
-- for good. ws_day orders a workspace's day for the day limits.
CREATE TABLE neo_spends (
	id         text COLLATE "C" PRIMARY KEY,
	intent_id  text COLLATE "C" NOT NULL,
	seq        int NOT NULL,
	ws_day     text COLLATE "C" NOT NULL,
	created_ns bigint NOT NULL,
	body       bytea NOT NULL
);
CREATE INDEX neo_spends_intent ON neo_spends (intent_id, seq);
CREATE INDEX neo_spends_day ON neo_spends (ws_day);
CREATE INDEX neo_spends_created ON neo_spends (created_ns);

-- The calls log: an approved call with a side effect, recorded before it
-- is made.
CREATE TABLE neo_calls (
	key      text COLLATE "C" PRIMARY KEY,
	begun_ns bigint NOT NULL,
	ended_ns bigint
);
