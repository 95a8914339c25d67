-- neobot's first schema: what store (bbolt) keeps, as tables. Times are
-- unix nanoseconds (bigint) so they round-trip exactly; keys that are
-- listed in order use the "C" collation, the byte order bbolt sorts by.

CREATE TABLE neo_meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);

-- One row per conversation: its last activity, the last entry number
-- handed out, and its consolidated summary (JSON, NULL before the first).
CREATE TABLE neo_threads (
	key       text COLLATE "C" PRIMARY KEY,
	active_ns bigint NOT NULL,
	last_seq  bigint NOT NULL DEFAULT 0,
	summary   bytea
);

-- Transcript entries; compaction flags them archived instead of moving them.
CREATE TABLE neo_entries (
	thread   text COLLATE "C" NOT NULL REFERENCES neo_threads (key) ON DELETE CASCADE,
	seq      bigint NOT NULL,
	at_ns    bigint NOT NULL,
	archived boolean NOT NULL DEFAULT false,
	data     bytea NOT NULL,
	PRIMARY KEY (thread, seq)
);

-- The inbound journal, which is also the event dedupe key: the primary key
-- is what makes a redelivered event, or one delivered to two instances,
-- journaled once. pending orders the uncompleted messages.
CREATE SEQUENCE neo_inbound_seq;
CREATE TABLE neo_inbound (
	platform     text NOT NULL,
	event_id     text NOT NULL,
	thread       text COLLATE "C" NOT NULL,
	body         bytea NOT NULL,
	journaled_ns bigint NOT NULL,
	pending      bigint,
	completed_ns bigint,
	PRIMARY KEY (platform, event_id)
);
CREATE INDEX neo_inbound_pending ON neo_inbound (pending) WHERE pending IS NOT NULL;
CREATE INDEX neo_inbound_pending_thread ON neo_inbound (thread, pending) WHERE pending IS NOT NULL;

-- Approval gates (JSON bodies), with the columns the sweep and the metrics
-- read; gate_nodes maps a binding to the latest gate opened with it.
CREATE TABLE neo_gates (
	token      text PRIMARY KEY,
	body       bytea NOT NULL,
	state      text NOT NULL,
	expires_ns bigint NOT NULL,
	node_key   text NOT NULL
);
CREATE INDEX neo_gates_pending ON neo_gates (state) WHERE state = 'pending';
CREATE TABLE neo_gate_nodes (
	binding text PRIMARY KEY,
	token   text NOT NULL
);

-- Delegations, kept after they finish until retention drops them.
CREATE TABLE neo_delegations (
	thread      text COLLATE "C" NOT NULL,
	call_id     text COLLATE "C" NOT NULL,
	body        bytea NOT NULL,
	started_ns  bigint NOT NULL,
	finished_ns bigint,
	PRIMARY KEY (thread, call_id)
);

-- Memory records; grp orders them as store does (memories, profiles,
-- patterns).
CREATE TABLE neo_memories (
	id   text COLLATE "C" PRIMARY KEY,
	grp  smallint NOT NULL,
	body bytea NOT NULL
);

-- Token usage per day and attribution.
CREATE TABLE neo_usage (
	day        text COLLATE "C" NOT NULL,
	platform   text COLLATE "C" NOT NULL,
	workspace  text COLLATE "C" NOT NULL,
	channel    text COLLATE "C" NOT NULL,
	user_id    text COLLATE "C" NOT NULL,
	thread     text COLLATE "C" NOT NULL,
	model      text COLLATE "C" NOT NULL,
	calls      bigint NOT NULL,
	prompt     bigint NOT NULL,
	completion bigint NOT NULL,
	PRIMARY KEY (day, platform, workspace, channel, user_id, thread, model)
);
