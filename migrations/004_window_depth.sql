-- The channel window's top-level predicate reads thread metadata
-- (spec/bridge-channel-window.md: depth IS NULL OR depth = 0 OR depth 1 and
-- broadcast), not the insert-time top_level flag, so events stored without
-- thread rows page as top-level. The partial index keeps the rest of its
-- predicate (shared/service/query/sql.go notRowKinds, the same text) and now holds
-- replies too; the window skips them by the thread_metadata primary key.
DROP INDEX IF EXISTS events_window;
CREATE INDEX events_window ON events (community_id, channel_id, created_at DESC, id)
    WHERE deleted_at IS NULL AND channel_id IS NOT NULL
      AND kind <> ALL ('{5,7,9005,40003,39000,39001,39002,39003,39005,39006,44100,44101}'::integer[]);
