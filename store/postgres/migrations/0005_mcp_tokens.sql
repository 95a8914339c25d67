-- MCP servers' OAuth grants, sealed (AES-256-GCM) by neobot before they
-- are written: the database never holds a token in clear.
CREATE TABLE neo_mcp_tokens (
	key        text COLLATE "C" PRIMARY KEY,
	sealed     bytea NOT NULL,
	updated_ns bigint NOT NULL
);
