-- NIP-29 as generic clients use it (issue 28): the group flags as state of
-- their own, the kinds a group takes, subgroups, any role name, the 39003
-- head, invite codes, and the replaceable index over NIP-01's whole
-- replaceable range (NIP-51 lists, 10002, 10050).

-- Flags beside Buzz's visibility: visibility 'private' is NIP-29's private
-- flag; a private channel was also restricted and closed, and hidden when it
-- is a system channel (nip29.VisibilityFlags).
ALTER TABLE channels
    ADD COLUMN restricted      boolean   NOT NULL DEFAULT false,
    ADD COLUMN hidden          boolean   NOT NULL DEFAULT false,
    ADD COLUMN closed          boolean   NOT NULL DEFAULT false,
    ADD COLUMN supported_kinds integer[],
    ADD COLUMN parent          text      COLLATE "C";
UPDATE channels SET restricted = true, closed = true, hidden = (channel_type = 'system')
WHERE visibility = 'private';

-- NIP-29 lets clients name roles; owner and admin carry privileges.
ALTER TABLE channel_members DROP CONSTRAINT channel_members_role_check;
ALTER TABLE channel_members ADD CONSTRAINT channel_members_role_check
    CHECK (length(role) BETWEEN 1 AND 32);

ALTER TABLE channel_state_heads DROP CONSTRAINT channel_state_heads_kind_check;
ALTER TABLE channel_state_heads ADD CONSTRAINT channel_state_heads_kind_check
    CHECK (kind IN (39000, 39001, 39002, 39003));

-- Invite codes of 9009 create-invite, usable until revoked (a 9005 of the
-- 9009) or past expires_at (its NIP-40 expiration tag). The 9009 itself is
-- not stored as an event: its codes would be readable by the group.
CREATE TABLE group_invites (
    community_id  text    NOT NULL,
    channel_id    text    COLLATE "C" NOT NULL,
    code          text    COLLATE "C" NOT NULL,
    event_id      text    COLLATE "C" NOT NULL,
    created_by    text    COLLATE "C" NOT NULL,
    created_at    bigint  NOT NULL,
    expires_at    bigint,
    revoked_at    bigint,
    PRIMARY KEY (community_id, channel_id, code)
);
CREATE INDEX group_invites_event ON group_invites (community_id, event_id);

-- Replaceable (0, 3, 10000-19999) and addressable (30000-39999) versions.
DROP INDEX IF EXISTS events_replaceable;
CREATE INDEX events_replaceable ON events (community_id, pubkey, kind, d_tag)
    WHERE kind IN (0, 3) OR kind BETWEEN 10000 AND 19999 OR kind BETWEEN 30000 AND 39999;
