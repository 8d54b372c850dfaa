-- Query-side indexes (channel window, aux closure, discovery). Owned by the query engine.

-- Channel window rows (spec/bridge-channel-window.md): top-level, not deleted,
-- newest first with ties by id. The partial predicate is the exact text the
-- window query carries (shared/service/query/sql.go notRowKinds), so on a freshly
-- loaded, unanalyzed table this is the one index that yields the rows already
-- ordered, and the LIMIT stops after limit+1 entries however big the channel.
-- Deleted rows and replies are not in it, so they never cost a window read;
-- reactions, edits, deletions and relay-signed state are not rows.
CREATE INDEX events_window ON events (community_id, channel_id, created_at DESC, id)
    WHERE top_level AND deleted_at IS NULL AND channel_id IS NOT NULL
      AND kind <> ALL ('{5,7,9005,40003,39000,39001,39002,39003,39005,39006,44100,44101}'::integer[]);

-- Aux closure and other #e reads by kind are served by event_tags_lookup_kind
-- (001). Thread panel replies by thread_metadata_root (001).
