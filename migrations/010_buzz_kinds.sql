-- Buzz's kinds (issue 29). The forum vote (45002) joins the aux closure, so
-- it is never a channel-window row: the events_window partial index takes
-- it into its not-row list (shared/domain/kinds NotRowKinds; the window
-- read carries the same text, shared/postgres/store/readwindow.go).
DROP INDEX IF EXISTS events_window;
CREATE INDEX events_window ON events (community_id, channel_id, created_at DESC, id)
    WHERE deleted_at IS NULL AND channel_id IS NOT NULL
      AND kind <> ALL ('{5,7,9005,40003,45002,39000,39001,39002,39003,39005,39006,44100,44101}'::integer[]);

-- Replaceable versions by author, kind and d: 0, 3 and NIP-01's whole
-- replaceable (10000-19999) and addressable (30000-39999) ranges, so a
-- replaceable kind added to shared/domain/kinds needs no new index
-- (store.addressKinds spells the same test).
DROP INDEX IF EXISTS events_replaceable;
CREATE INDEX events_replaceable ON events (community_id, pubkey, kind, d_tag)
    WHERE kind IN (0, 3) OR kind BETWEEN 10000 AND 19999 OR kind BETWEEN 30000 AND 39999;

-- NIP-CW's community row mode: when true, thread replies at any depth are
-- channel-window rows (changed by the community's operators through NIP-86,
-- echoed in every 39006).
ALTER TABLE communities ADD COLUMN thread_replies_in_channel boolean NOT NULL DEFAULT false;
