-- "Add to Slack" installations, one per workspace or Enterprise Grid org,
-- sealed (AES-256-GCM) by neobot before they are written: the database
-- never holds a bot token in clear.
CREATE TABLE neo_slack_installs (
	key        text COLLATE "C" PRIMARY KEY,
	sealed     bytea NOT NULL,
	updated_ns bigint NOT NULL
);
