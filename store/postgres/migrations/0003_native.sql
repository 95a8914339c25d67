-- What a model's answers taught about starting inside reasoning, per
-- model and endpoint, so a restart streams its first answer at once.
CREATE TABLE neo_model_postures (
	model    text COLLATE "C" NOT NULL,
	endpoint text COLLATE "C" NOT NULL,
	posture  text NOT NULL,
	PRIMARY KEY (model, endpoint)
);

-- Ratings of answers: one per thread, turn and user, the latest wins.
CREATE TABLE neo_ratings (
	thread  text COLLATE "C" NOT NULL,
	turn    text COLLATE "C" NOT NULL,
	user_id text COLLATE "C" NOT NULL,
	at_ns   bigint NOT NULL,
	body    bytea NOT NULL,
	PRIMARY KEY (thread, turn, user_id)
);
CREATE INDEX neo_ratings_at ON neo_ratings (at_ns);
