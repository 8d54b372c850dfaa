-- Issue 40, the rest of the protocol.
--
-- NIP-40: an event's expiration (nip40.Expiration, unix seconds) beside it.
-- Every read predicate leaves out a row whose expires_at is not after the
-- statement's clock (store/access.go, unexpiredSQL), and the expiry sweep
-- (functions/expiry-sweep) deletes such rows in batches by this index. Rows
-- stored before this version keep NULL: ingest took none with an expiration
-- already past, and those with one ahead are filled from their raw tags.
ALTER TABLE events ADD COLUMN expires_at bigint;
UPDATE events e SET expires_at = x.v::bigint
FROM (
  SELECT e2.community_id, e2.id, (SELECT t->>1 FROM jsonb_array_elements((e2.raw::jsonb)->'tags') t
                                   WHERE t->>0 = 'expiration' LIMIT 1) AS v
  FROM events e2 WHERE e2.raw LIKE '%"expiration"%'
) x
WHERE e.community_id = x.community_id AND e.id = x.id AND x.v ~ '^[0-9]{1,18}$' AND x.v::bigint > 0;
CREATE INDEX events_expiry ON events (expires_at) WHERE expires_at IS NOT NULL;
