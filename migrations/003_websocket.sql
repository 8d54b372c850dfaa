-- WebSocket connections (one row per API Gateway connection id) and their
-- live subscriptions, indexed by channel for fan-out. Rows expire with the
-- API Gateway connection lifetime (2 h) because $disconnect is best effort.

CREATE TABLE ws_connections (
    id              text    COLLATE "C" PRIMARY KEY,
    community_id    text    NOT NULL REFERENCES communities (id),
    -- normalized NIP-42 relay URLs this connection may authenticate for
    relay_urls      text[]  NOT NULL,
    challenge       text    NOT NULL,
    challenge_sent  boolean NOT NULL DEFAULT false,
    pubkey          text    COLLATE "C",  -- NULL until AUTH succeeds
    connected_at    bigint  NOT NULL,
    expires_at      bigint  NOT NULL
);
CREATE INDEX ws_connections_expiry ON ws_connections (expires_at);

-- One row per REQ subscription; filters is the JSON array of its NIP-01
-- filters (extension fields already dropped). pubkey is the reader whose
-- access rules apply.
CREATE TABLE ws_subscriptions (
    connection_id  text   COLLATE "C" NOT NULL REFERENCES ws_connections (id) ON DELETE CASCADE,
    sub_id         text   COLLATE "C" NOT NULL,
    community_id   text   NOT NULL,
    pubkey         text   COLLATE "C" NOT NULL,
    filters        text   NOT NULL,
    created_at     bigint NOT NULL,
    PRIMARY KEY (connection_id, sub_id)
);

-- Fan-out index: one row per channel a subscription's filters pin (their
-- #h values, or #d on filters of channel-state kinds only), plus one row
-- with channel_id '' when some filter pins no channel. An event of channel
-- C looks up C and '' only; it never scans every subscription.
CREATE TABLE ws_subscription_channels (
    community_id   text COLLATE "C" NOT NULL,
    channel_id     text COLLATE "C" NOT NULL,
    connection_id  text COLLATE "C" NOT NULL,
    sub_id         text COLLATE "C" NOT NULL,
    PRIMARY KEY (community_id, channel_id, connection_id, sub_id),
    FOREIGN KEY (connection_id, sub_id) REFERENCES ws_subscriptions (connection_id, sub_id) ON DELETE CASCADE
);
CREATE INDEX ws_subscription_channels_sub ON ws_subscription_channels (connection_id, sub_id);
