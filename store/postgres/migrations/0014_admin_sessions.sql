-- The admin page's Slack sign-ins, so every instance takes a session any
-- of them opened and a sign-out on one ends it on all. id is the SHA-256
-- of the session's token; the token itself is never stored.
CREATE TABLE neo_admin_sessions (
	id         text COLLATE "C" PRIMARY KEY,
	data       bytea NOT NULL,
	expires_ns bigint NOT NULL
);
CREATE INDEX neo_admin_sessions_expires ON neo_admin_sessions (expires_ns);
