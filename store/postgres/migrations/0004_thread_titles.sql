-- A conversation's title, set by its owner (the web's rename); NULL
-- until then.
ALTER TABLE neo_threads ADD COLUMN title text;
