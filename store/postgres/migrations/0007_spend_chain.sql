-- The spend ledger's hash chain: one entry per write of a call, appended
-- under the advisory lock 'spend chain' so that instances appending at
-- once take turns and agree on one order (seq). record holds the call as
-- written, byte for byte: hash covers these bytes (docs/spending.md).
CREATE TABLE neo_spend_chain (
	seq      bigint PRIMARY KEY,
	prev     text COLLATE "C" NOT NULL,
	hash     text COLLATE "C" NOT NULL UNIQUE,
	spend_id text COLLATE "C" NOT NULL,
	state    text COLLATE "C" NOT NULL,
	record   bytea NOT NULL
);
CREATE INDEX neo_spend_chain_spend ON neo_spend_chain (spend_id, seq);

-- Each call's last chain entry: its receipt.
ALTER TABLE neo_spends ADD COLUMN chain_seq bigint;
ALTER TABLE neo_spends ADD COLUMN chain_hash text COLLATE "C";

-- The calls recorded before the chain existed are chained once, by
-- neobot right after this migration (the hash is computed in Go, the one
-- definition of it), and the marker removed in the same transaction.
INSERT INTO neo_meta (key, value) VALUES ('spend_chain_upgrade', 'pending')
	ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
