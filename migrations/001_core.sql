-- Core schema: communities, events with a normalized tag index, NIP-29 channel
-- state, thread metadata, relay-signed state heads, and the NIP-98 replay guard.
-- Every table is scoped by community_id so one deployment can host many small
-- communities. Valid on PostgreSQL 15 and 16 (Aurora).

CREATE TABLE communities (
    id          text PRIMARY KEY,
    host        text UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO communities (id) VALUES ('default');

-- events, event_tags and thread_metadata carry no foreign keys: each
-- event's rows are written by one statement (store.InsertEvent) and removed by
-- one (store.DeleteEvents), and the referential triggers cost about 15 % of
-- reply throughput (docs/benchmarks.md). Communities are registered by the
-- migrator (migrate.EnsureCommunity) before any event arrives.
--
-- One row per stored event. raw is the exact JSON served to readers.
-- channel_id is the event's channel: its own h tag, or for reactions, edits
-- and deletions the channel of their target. top_level is fixed at insert:
-- false only for non-broadcast replies.
CREATE TABLE events (
    community_id  text    NOT NULL,
    id            text    COLLATE "C" NOT NULL,
    pubkey        text    COLLATE "C" NOT NULL,
    created_at    bigint  NOT NULL,
    kind          integer NOT NULL,
    channel_id    text    COLLATE "C",
    d_tag         text    COLLATE "C",
    top_level     boolean NOT NULL DEFAULT true,
    deleted_at    bigint,
    raw           text    NOT NULL,
    search        tsvector,
    PRIMARY KEY (community_id, id)
);
CREATE INDEX events_channel_time ON events (community_id, channel_id, created_at DESC, id)
    WHERE channel_id IS NOT NULL;
CREATE INDEX events_kind_time ON events (community_id, kind, created_at DESC, id);
CREATE INDEX events_author_time ON events (community_id, pubkey, created_at DESC, id);
CREATE INDEX events_time ON events (community_id, created_at DESC, id);
-- Replaceable (0, 3, 10009) and addressable (30000-39999) versions by
-- author, kind and d; the predicate keeps chat messages out of it.
CREATE INDEX events_replaceable ON events (community_id, pubkey, kind, d_tag)
    WHERE kind IN (0, 3, 10009) OR kind BETWEEN 30000 AND 39999;
CREATE INDEX events_search ON events USING gin (search) WHERE search IS NOT NULL;

-- Single-letter tags, one row per (event, tag name, value). kind, created_at
-- and channel_id are copied so a tag filter is answered from this index alone.
CREATE TABLE event_tags (
    community_id  text    NOT NULL,
    event_id      text    COLLATE "C" NOT NULL,
    name          text    COLLATE "C" NOT NULL,
    value         text    COLLATE "C" NOT NULL,
    kind          integer NOT NULL,
    created_at    bigint  NOT NULL,
    channel_id    text    COLLATE "C"
);
CREATE INDEX event_tags_lookup_kind ON event_tags (community_id, name, value, kind, created_at DESC, event_id);
CREATE INDEX event_tags_event ON event_tags (community_id, event_id);

-- NIP-29 channels (groups). labels keep their stored (first-seen) order.
CREATE TABLE channels (
    community_id  text   NOT NULL REFERENCES communities (id),
    id            text   COLLATE "C" NOT NULL,
    name          text   NOT NULL,
    about         text   NOT NULL DEFAULT '',
    picture       text   NOT NULL DEFAULT '',
    channel_type  text   NOT NULL CHECK (channel_type IN ('stream', 'forum', 'dm', 'workflow', 'system')),
    visibility    text   NOT NULL CHECK (visibility IN ('open', 'private')),
    labels        text[] NOT NULL DEFAULT '{}',
    creator       text   COLLATE "C" NOT NULL,
    created_at    bigint NOT NULL,
    create_event  text   COLLATE "C" NOT NULL,
    deleted_at    bigint,
    PRIMARY KEY (community_id, id)
);

CREATE TABLE channel_members (
    community_id  text   NOT NULL,
    channel_id    text   COLLATE "C" NOT NULL,
    pubkey        text   COLLATE "C" NOT NULL,
    role          text   NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    added_at      bigint NOT NULL,
    removed_at    bigint,
    PRIMARY KEY (community_id, channel_id, pubkey),
    FOREIGN KEY (community_id, channel_id) REFERENCES channels (community_id, id)
);
CREATE INDEX channel_members_by_pubkey ON channel_members (community_id, pubkey, channel_id)
    WHERE removed_at IS NULL;

-- Thread metadata for channel messages. Top-level messages have depth 0;
-- replies point at their parent and root. Counters change in the transaction
-- that stores or deletes a reply.
CREATE TABLE thread_metadata (
    community_id      text    NOT NULL,
    event_id          text    COLLATE "C" NOT NULL,
    channel_id        text    COLLATE "C" NOT NULL,
    created_at        bigint  NOT NULL,
    parent_id         text    COLLATE "C",
    root_id           text    COLLATE "C",
    depth             integer NOT NULL DEFAULT 0,
    broadcast         boolean NOT NULL DEFAULT false,
    reply_count       integer NOT NULL DEFAULT 0,
    descendant_count  integer NOT NULL DEFAULT 0,
    last_reply_at     bigint,
    PRIMARY KEY (community_id, event_id)
);
CREATE INDEX thread_metadata_root ON thread_metadata (community_id, root_id, created_at, event_id)
    WHERE root_id IS NOT NULL;

-- The current relay-signed 39000/39001/39002 per channel.
CREATE TABLE channel_state_heads (
    community_id  text    NOT NULL,
    channel_id    text    COLLATE "C" NOT NULL,
    kind          integer NOT NULL CHECK (kind IN (39000, 39001, 39002)),
    event_id      text    COLLATE "C" NOT NULL,
    created_at    bigint  NOT NULL,
    PRIMARY KEY (community_id, channel_id, kind)
);

-- NIP-98 replay guard shared by every instance: an auth event id is accepted
-- once per community.
CREATE TABLE nip98_seen (
    community_id  text   NOT NULL,
    event_id      text   COLLATE "C" NOT NULL,
    expires_at    bigint NOT NULL,
    PRIMARY KEY (community_id, event_id)
);
CREATE INDEX nip98_seen_expiry ON nip98_seen (expires_at);
