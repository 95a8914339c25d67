-- Each person's share of the bot (core/quota), counted here so that every
-- instance holds a person to one limit: the GCRA arrival time of their
-- messages, the bytes they sent on day_ns's UTC day, and how many times
-- in a row they were refused (1 is the first refusal, the one answered).
CREATE TABLE neo_shares (
	person  text COLLATE "C" PRIMARY KEY,
	tat_ns  bigint NOT NULL,
	day_ns  bigint NOT NULL,
	bytes   bigint NOT NULL,
	refused bigint NOT NULL
);
