-- Buzz desktop's moderation and admin panes (issue 52).
--
-- Who set a ban or timeout: GET /moderation/restricted and the admin API
-- name the operator behind each restriction. Both doors write it (NIP-86
-- banpubkey and the 9040/9042 commands, store.putPubkeyRule); rows from
-- before this column carry '' and are shown as the community's relay key.
ALTER TABLE community_pubkey_rules ADD COLUMN actor text COLLATE "C" NOT NULL DEFAULT '';

-- Kind 42000 product feedback, as Buzz's relay keeps it: validated at
-- ingest, written here in the event's transaction, never stored as an event
-- and never delivered; read by the community's operators through the admin
-- API (GET /api/admin/v1/feedback).
CREATE TABLE product_feedback (
    community_id     text    NOT NULL REFERENCES communities (id),
    event_id         text    COLLATE "C" NOT NULL,
    submitter        text    COLLATE "C" NOT NULL,
    category         text,
    body             text    NOT NULL,
    tags             jsonb   NOT NULL,
    event_created_at bigint  NOT NULL,
    received_at      bigint  NOT NULL,
    status           text    NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'reviewed', 'archived')),
    PRIMARY KEY (community_id, event_id)
);
CREATE INDEX product_feedback_received ON product_feedback (community_id, received_at DESC, event_id);
