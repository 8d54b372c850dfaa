-- NIP-43 relay membership (issue 29), as Buzz's relay runs it: a community
-- may enforce membership (off by default; NIP-86 setrelaymembership), and
-- then only its members, its admins and its owners (the community's
-- operators, who are never rows here) may publish, read, count or upload.
-- 9030-9032 and the 28936 leave request change these rows; the relay-signed
-- 13534 list and 8000/8001 deltas are published in the same transaction.
ALTER TABLE communities ADD COLUMN membership_enforced boolean NOT NULL DEFAULT false;

CREATE TABLE relay_members (
    community_id  text   NOT NULL REFERENCES communities (id),
    pubkey        text   COLLATE "C" NOT NULL,
    role          text   NOT NULL CHECK (role IN ('member', 'admin')),
    added_by      text   COLLATE "C",
    added_at      bigint NOT NULL,
    PRIMARY KEY (community_id, pubkey)
);
