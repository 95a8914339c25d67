-- Web uploads and the files tools returned, kept for their owner where
-- every instance reads them. thread is '' for an upload not sent yet;
-- a file goes with its thread (DeleteThread, and the sweep), an upload
-- never sent after a day. The size cap is core.MaxStoredFile.
CREATE TABLE neo_files (
	id     text COLLATE "C" PRIMARY KEY,
	owner  text NOT NULL,
	thread text COLLATE "C" NOT NULL,
	name   text NOT NULL,
	mime   text NOT NULL,
	at_ns  bigint NOT NULL,
	data   bytea NOT NULL CHECK (octet_length(data) <= 16777216)
);
CREATE INDEX neo_files_thread ON neo_files (thread);
