-- Rate-limit counters shared by every Lambda instance (shared/service/ratelimit):
-- one row per (community, key, fixed window). Unlogged: a crash forgets the
-- current windows' counts, which only ever lets a key start its window
-- afresh; it saves a WAL write on every hit.
CREATE UNLOGGED TABLE rate_counters (
  community_id text   NOT NULL,
  key          text   NOT NULL,
  window_start bigint NOT NULL,
  hits         bigint NOT NULL,
  PRIMARY KEY (community_id, key, window_start)
);
CREATE INDEX rate_counters_window ON rate_counters (window_start);
