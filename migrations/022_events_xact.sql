-- Which transaction stored each event (its xid8 as a number, from
-- pg_current_xact_id()), so that a live REQ answered before its
-- subscription reached the session store can ask for exactly the events
-- its read's snapshot did not see (store.EventsListCommittedAfter). Rows
-- stored before this migration read 0: older than any snapshot. The
-- default is set after the column exists, so adding it rewrites nothing.
ALTER TABLE events ADD COLUMN xact bigint NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN xact SET DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX events_xact ON events (community_id, xact);
