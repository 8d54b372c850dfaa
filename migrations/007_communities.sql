-- Communities as data (issue 13): each community row carries what its
-- hostnames serve (name, about, picture for NIP-11), the keys that may
-- manage it over NIP-86, its limits and when it was disabled. Hostnames get
-- their own table so one community can have several and none is shared;
-- the old communities.host column stays for releases before this one, and
-- its values are copied here.
ALTER TABLE communities
    ADD COLUMN name        text   NOT NULL DEFAULT '',
    ADD COLUMN about       text   NOT NULL DEFAULT '',
    ADD COLUMN picture     text   NOT NULL DEFAULT '',
    ADD COLUMN operators   text[] NOT NULL DEFAULT '{}',
    ADD COLUMN limits      jsonb  NOT NULL DEFAULT '{}',
    ADD COLUMN disabled_at timestamptz;

-- host is lowercase, without port.
CREATE TABLE community_hosts (
    host          text PRIMARY KEY CHECK (host = lower(host) AND host <> ''),
    community_id  text NOT NULL REFERENCES communities (id)
);
CREATE INDEX community_hosts_community ON community_hosts (community_id);
INSERT INTO community_hosts (host, community_id)
SELECT lower(split_part(host, ':', 1)), id FROM communities WHERE host IS NOT NULL AND host <> ''
ON CONFLICT DO NOTHING;

-- NIP-86 banpubkey / allowpubkey: one rule per (community, pubkey).
CREATE TABLE community_pubkey_rules (
    community_id  text   NOT NULL REFERENCES communities (id),
    pubkey        text   COLLATE "C" NOT NULL,
    rule          text   NOT NULL CHECK (rule IN ('ban', 'allow')),
    reason        text   NOT NULL DEFAULT '',
    created_at    bigint NOT NULL,
    PRIMARY KEY (community_id, pubkey)
);

-- NIP-86 banevent: the event is removed from reads and refused if sent again.
CREATE TABLE community_banned_events (
    community_id  text   NOT NULL REFERENCES communities (id),
    event_id      text   COLLATE "C" NOT NULL,
    reason        text   NOT NULL DEFAULT '',
    created_at    bigint NOT NULL,
    PRIMARY KEY (community_id, event_id)
);
