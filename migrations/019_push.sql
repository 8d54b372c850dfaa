-- Push notifications (issue 39, docs/push.md): NIP-9a subscriptions (kind
-- 30390) and NIP-PL leases (kind 30350), and the deliveries they make.
--
-- push_subscriptions is the effective state of each stored 30390 or 30350,
-- written by the transaction that stores the event (shared/service/push,
-- called by ingest): one row per address (community, pubkey, kind, d). A
-- 30390 keeps its filters, ignore filters, callback URL and include_event;
-- a 30350 the filters of its decrypted subscriptions, its endpoint grant,
-- its generation watermark and whether it is active. The row names the
-- stored event (event_id): a deleted or replaced event stops matching,
-- because matching joins events. dropped_at is set when the callback
-- answered 404/410 or kept failing.
CREATE TABLE push_subscriptions (
    community_id  text    NOT NULL REFERENCES communities (id),
    pubkey        text    COLLATE "C" NOT NULL,
    kind          integer NOT NULL CHECK (kind IN (30350, 30390)),
    d_tag         text    COLLATE "C" NOT NULL,
    event_id      text    COLLATE "C" NOT NULL,
    filters       jsonb   NOT NULL,
    ignore        jsonb   NOT NULL DEFAULT '[]',
    target        text    NOT NULL,
    relay         text    NOT NULL DEFAULT '',
    include_event boolean NOT NULL DEFAULT false,
    generation    bigint  NOT NULL DEFAULT 0,
    active        boolean NOT NULL DEFAULT true,
    expires_at    bigint,
    failures      integer NOT NULL DEFAULT 0,
    dropped_at    bigint,
    PRIMARY KEY (community_id, pubkey, kind, d_tag)
);
CREATE INDEX push_subscriptions_live ON push_subscriptions (community_id)
    WHERE active AND dropped_at IS NULL;

-- push_deliveries: one row per (event, subscription), inserted by the
-- matcher with ON CONFLICT DO NOTHING, so a batch run twice (a retry after
-- a crash) matches again and stores nothing twice. state: pending until the
-- callback or gateway acknowledged it (sent), dead after
-- push.MaxAttempts or a drop, skipped when the subscriber may no longer
-- read the event at delivery time. sent_at feeds the per-target rate limit.
CREATE TABLE push_deliveries (
    community_id  text    NOT NULL,
    event_id      text    COLLATE "C" NOT NULL,
    pubkey        text    COLLATE "C" NOT NULL,
    kind          integer NOT NULL,
    d_tag         text    COLLATE "C" NOT NULL,
    target        text    NOT NULL,
    state         text    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dead', 'skipped')),
    attempts      integer NOT NULL DEFAULT 0,
    next_at       bigint  NOT NULL,
    created_at    bigint  NOT NULL,
    sent_at       bigint,
    PRIMARY KEY (community_id, event_id, pubkey, kind, d_tag)
);
CREATE INDEX push_deliveries_pending ON push_deliveries (community_id, next_at) WHERE state = 'pending';
CREATE INDEX push_deliveries_rate ON push_deliveries (target, sent_at) WHERE sent_at IS NOT NULL;

-- The NIP-PL executor key of each community (one per community, like the
-- relay key): its secret sealed with KMS (or the local key in make dev),
-- created once by the first function that needs it.
ALTER TABLE communities ADD COLUMN push_key_ciphertext bytea;
ALTER TABLE communities ADD COLUMN push_key_pubkey text;
