-- What a model's answers taught about starting inside reasoning, per
-- model and endpoint, so a restart streams its first answer at once.
CREATE TABLE neo_model_postures (
	model    text COLLATE "C" NOT NULL,
	endpoint text COLLATE "C" NOT NULL,
	posture  text NOT NULL,
	PRIMARY KEY (model, endpoint)
);
