-- Buzz's kinds (issue 29). The forum vote (45002) joins the aux closure and
-- the thread window's bounds (39007) the overlays, so neither is ever a
-- channel-window row: the events_window partial index takes them into its
-- not-row list (shared/domain/kinds NotRowKinds; the window
-- read carries the same text, shared/postgres/store/readwindow.go).
DROP INDEX IF EXISTS events_window;
CREATE INDEX events_window ON events (community_id, channel_id, created_at DESC, id)
    WHERE deleted_at IS NULL AND channel_id IS NOT NULL
      AND kind <> ALL ('{5,7,9005,40003,45002,39000,39001,39002,39003,39005,39006,39007,44100,44101}'::integer[]);

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

-- Buzz's moderation commands (9040-9044) act on the bans NIP-86 manages:
-- a ban may expire, and a timeout is a write block until its expiry.
ALTER TABLE community_pubkey_rules ADD COLUMN expires_at bigint;
ALTER TABLE community_pubkey_rules DROP CONSTRAINT community_pubkey_rules_rule_check;
ALTER TABLE community_pubkey_rules ADD CONSTRAINT community_pubkey_rules_rule_check
    CHECK (rule IN ('ban', 'allow', 'timeout'));

-- One audit row per accepted moderation command (9040-9044).
CREATE TABLE moderation_actions (
    community_id  text    NOT NULL REFERENCES communities (id),
    event_id      text    COLLATE "C" NOT NULL,
    actor         text    COLLATE "C" NOT NULL,
    kind          integer NOT NULL,
    target        text    COLLATE "C" NOT NULL,
    reason        text    NOT NULL DEFAULT '',
    expires_at    bigint,
    created_at    bigint  NOT NULL,
    PRIMARY KEY (community_id, event_id)
);

-- NIP-56 reports (1984): a queue for the community's operators, never an
-- event any member can read or receive live.
CREATE TABLE moderation_reports (
    community_id   text    NOT NULL REFERENCES communities (id),
    id             text    COLLATE "C" NOT NULL,
    reporter       text    COLLATE "C" NOT NULL,
    target_pubkey  text    COLLATE "C" NOT NULL,
    target_event   text    COLLATE "C",
    report_type    text    NOT NULL DEFAULT '',
    content        text    NOT NULL DEFAULT '',
    raw            text    NOT NULL,
    created_at     bigint  NOT NULL,
    status         text    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
    resolved_by    text    COLLATE "C",
    resolution     text,
    resolved_at    bigint,
    PRIMARY KEY (community_id, id)
);
CREATE INDEX moderation_reports_open ON moderation_reports (community_id, created_at) WHERE status = 'open';
