-- Media (issue 30): Blossom blobs on S3, one object per community and hash
-- (shared/service/media, shared/postgres/store/blobs.go). Postgres holds what
-- HEAD, list, quotas and deletion read: the S3 object blobs/<community>/<sha256>
-- exists exactly when its blobs row does (the row is written after the
-- object, and removed before it is moved to trash/).
CREATE TABLE blobs (
    community_id  text   NOT NULL,
    sha256        text   COLLATE "C" NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size          bigint NOT NULL CHECK (size > 0),
    type          text   NOT NULL,
    created_at    bigint NOT NULL,
    PRIMARY KEY (community_id, sha256)
);

-- Who uploaded a blob: one row per key, a blob with no owner left is
-- deleted. BUD-02 /list/<pubkey> reads it newest first.
CREATE TABLE blob_owners (
    community_id  text   NOT NULL,
    sha256        text   COLLATE "C" NOT NULL,
    pubkey        text   COLLATE "C" NOT NULL,
    uploaded_at   bigint NOT NULL,
    PRIMARY KEY (community_id, sha256, pubkey),
    FOREIGN KEY (community_id, sha256) REFERENCES blobs (community_id, sha256) ON DELETE CASCADE
);
CREATE INDEX blob_owners_by_pubkey ON blob_owners (community_id, pubkey, uploaded_at DESC);

-- Uploads larger than one function request: presigned S3 PUTs of
-- uploads/<community>/<id>, with the hash, size and type the uploader
-- claimed; the relay completes one (checks the bytes, copies to blobs/) on
-- the next request for its hash, or drops it.
CREATE TABLE blob_uploads (
    community_id  text   NOT NULL,
    upload_id     text   COLLATE "C" NOT NULL,
    sha256        text   COLLATE "C" NOT NULL,
    size          bigint NOT NULL CHECK (size > 0),
    type          text   NOT NULL,
    pubkey        text   COLLATE "C" NOT NULL,
    created_at    bigint NOT NULL,
    expires_at    bigint NOT NULL,
    PRIMARY KEY (community_id, upload_id)
);
CREATE INDEX blob_uploads_by_hash ON blob_uploads (community_id, sha256, created_at);

-- Quotas held across instances: bytes one key uploaded per UTC day, and
-- bytes a community stores (changed in the transaction that adds or removes
-- a blob, never past its limit).
CREATE TABLE media_key_days (
    community_id  text   NOT NULL,
    pubkey        text   COLLATE "C" NOT NULL,
    day           bigint NOT NULL,
    bytes         bigint NOT NULL,
    PRIMARY KEY (community_id, pubkey, day)
);
CREATE TABLE media_stored (
    community_id  text   PRIMARY KEY,
    bytes         bigint NOT NULL CHECK (bytes >= 0)
);
