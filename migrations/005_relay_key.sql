-- The community's relay key, created once by the deploy-time migrate trigger
-- (shared/wiring/provision): the KMS ciphertext of its 32-byte secret, bound to the
-- encryption context {"community": id}, and the public key it signs as. The
-- trigger never replaces a stored key; rotation is a deliberate command.
-- Both columns are set together or not at all.
ALTER TABLE communities
    ADD COLUMN relay_key_ciphertext bytea,
    ADD COLUMN relay_pubkey text,
    ADD CONSTRAINT communities_relay_key_whole
        CHECK ((relay_key_ciphertext IS NULL) = (relay_pubkey IS NULL));
