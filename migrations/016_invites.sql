-- Invites (issue 42): how a newcomer gets into a community that enforces
-- NIP-43 membership, through Buzz's HTTP API (POST /api/invites, /claim)
-- or NIP-43's events (a relay-signed 28935 minted on REQ, a 28934 join
-- request with its claim). shared/domain/invite holds the rules,
-- shared/service/invites the use case.
--
-- An invite keeps the SHA-256 of its code only (the code is shown once,
-- to its creator). A claim takes one use with a conditional UPDATE in the
-- same transaction as the admission (relay_members, 8000, 13534), so a
-- code of n uses admits at most n keys however many claims race; the
-- creator must still be an owner (an operator) or an admin when it is
-- claimed.
CREATE TABLE invites (
    community_id  text    NOT NULL REFERENCES communities (id),
    code_hash     text    COLLATE "C" NOT NULL,
    created_by    text    COLLATE "C" NOT NULL,
    created_at    bigint  NOT NULL,
    expires_at    bigint  NOT NULL,
    max_uses      integer NOT NULL DEFAULT 0 CHECK (max_uses >= 0 AND max_uses <= 10000), -- 0: unlimited
    uses          integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
    revoked_at    bigint,
    PRIMARY KEY (community_id, code_hash),
    CHECK (max_uses = 0 OR uses <= max_uses)
);
CREATE INDEX invites_expiry ON invites (expires_at);

-- Each admission through an invite: who, when, and the join policy
-- version the key accepted (the acceptance receipt's record; NULL when no
-- policy was configured).
CREATE TABLE invite_claims (
    community_id   text   NOT NULL,
    code_hash      text   COLLATE "C" NOT NULL,
    pubkey         text   COLLATE "C" NOT NULL,
    claimed_at     bigint NOT NULL,
    policy_version text,
    PRIMARY KEY (community_id, code_hash, pubkey),
    FOREIGN KEY (community_id, code_hash) REFERENCES invites (community_id, code_hash) ON DELETE CASCADE
);

-- A community's join policy (NIP-86 setjoinpolicy): Markdown terms and
-- privacy, whether an age attestation is required, its version, and the
-- secret that keys its acceptance receipts (never shown).
CREATE TABLE join_policies (
    community_id     text    PRIMARY KEY REFERENCES communities (id),
    terms_markdown   text    NOT NULL DEFAULT '',
    privacy_markdown text    NOT NULL DEFAULT '',
    age_required     boolean NOT NULL DEFAULT false,
    version          text    NOT NULL,
    secret           bytea   NOT NULL
);
