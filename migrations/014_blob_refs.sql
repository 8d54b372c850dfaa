-- Media reads follow the events that share a blob (issue 36), as Buzz's
-- relay gates them: a blob referenced by a stored event is read by its
-- owners and by the readers of one of those events (the access rule,
-- store.BlobFor); a blob no event references stays public.
--
-- blob_refs is which events name which blobs: an event names a blob when
-- its raw JSON holds the blob's hash as a run of exactly 64 lowercase hex
-- characters (a blob URL in the content, an imeta "url ..." or "x ..."
-- entry, an x tag, a blossom: URI) other than its own id and pubkey, and
-- the community holds that blob or a staged upload of it when the event is
-- stored (clients upload before they post). Rows outlive their events on
-- purpose (no foreign key, as events have none): a deleted or replaced
-- event still makes its blob a referenced one, readable through the
-- references that remain.
CREATE TABLE blob_refs (
    community_id  text   NOT NULL,
    sha256        text   COLLATE "C" NOT NULL,
    event_id      text   COLLATE "C" NOT NULL,
    PRIMARY KEY (community_id, sha256, event_id)
);

-- Filled by the statement that stores an event, in its transaction. Only an
-- event that can name a blob at all (a '/' of a URL, an x tag or imeta x
-- entry, a blossom: URI) is scanned: for the others (most chat messages,
-- reactions, state) the trigger is not even called; the scan of one that
-- is costs about 0.15 ms of database CPU.
CREATE FUNCTION blob_refs_of_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO blob_refs (community_id, sha256, event_id)
    SELECT DISTINCT NEW.community_id, m.token, NEW.id
    FROM (SELECT (t COLLATE "C") AS token FROM regexp_split_to_table(NEW.raw, '[^0-9a-f]+') t WHERE length(t) = 64) m
    WHERE m.token <> NEW.id AND m.token <> NEW.pubkey
      AND (EXISTS (SELECT 1 FROM blobs b WHERE b.community_id = NEW.community_id AND b.sha256 = m.token)
        OR EXISTS (SELECT 1 FROM blob_uploads u WHERE u.community_id = NEW.community_id AND u.sha256 = m.token))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_blob_refs AFTER INSERT ON events FOR EACH ROW
    WHEN (strpos(NEW.raw, '/') > 0 OR strpos(NEW.raw, '"x') > 0 OR strpos(NEW.raw, 'blossom:') > 0)
    EXECUTE FUNCTION blob_refs_of_event();

-- The events stored before this migration.
INSERT INTO blob_refs (community_id, sha256, event_id)
SELECT DISTINCT e.community_id, m.token, e.id
FROM events e
CROSS JOIN LATERAL (
    SELECT (t COLLATE "C") AS token FROM regexp_split_to_table(e.raw, '[^0-9a-f]+') t WHERE length(t) = 64
) m
WHERE e.community_id IN (SELECT community_id FROM blobs UNION SELECT community_id FROM blob_uploads)
  AND (strpos(e.raw, '/') > 0 OR strpos(e.raw, '"x') > 0 OR strpos(e.raw, 'blossom:') > 0)
  AND m.token <> e.id AND m.token <> e.pubkey
  AND (EXISTS (SELECT 1 FROM blobs b WHERE b.community_id = e.community_id AND b.sha256 = m.token)
    OR EXISTS (SELECT 1 FROM blob_uploads u WHERE u.community_id = e.community_id AND u.sha256 = m.token))
ON CONFLICT DO NOTHING;
