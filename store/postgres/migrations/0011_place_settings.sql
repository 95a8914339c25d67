-- Every version of every place's settings (core/governance): who changed
-- them, when, and the settings before and after. A place's newest version
-- is its highest; the primary key refuses a second version n.
CREATE TABLE neo_place_settings (
	place   text COLLATE "C" NOT NULL,
	version bigint NOT NULL,
	body    jsonb NOT NULL,
	PRIMARY KEY (place, version)
);
