-- Media reads follow the events that share a blob (issue 36), as Buzz's
-- relay gates them: a blob referenced by a stored event is read by its
-- owners and by the readers of one of those events (the access rule,
-- store.BlobFor); a blob no event references stays public.
--
-- blob_refs is which events name which blobs: an event names a blob when
-- its raw JSON holds the blob's hash as a 64-hex token (a blob URL in the
-- content, an imeta "url ..." or "x ..." entry, an x tag) other than its own
-- id and pubkey, and the community holds that blob or a staged upload of it
-- when the event is stored (clients upload before they post). Rows outlive
-- their events on purpose (no foreign key, as events have none): a deleted
-- or replaced event still makes its blob a referenced one, readable through
-- the references that remain.
CREATE TABLE blob_refs (
    community_id  text   NOT NULL,
    sha256        text   COLLATE "C" NOT NULL,
    event_id      text   COLLATE "C" NOT NULL,
    PRIMARY KEY (community_id, sha256, event_id)
);

-- Filled by the statement that stores the events (one trigger per statement,
-- over the rows it inserted), so every write path records references in its
-- own transaction.
CREATE FUNCTION blob_refs_of_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO blob_refs (community_id, sha256, event_id)
    SELECT DISTINCT i.community_id, m.token, i.id
    FROM inserted i
    CROSS JOIN LATERAL (
        SELECT (r[1] COLLATE "C") AS token
        FROM regexp_matches(i.raw, '(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])', 'g') AS r
    ) m
    WHERE m.token <> i.id AND m.token <> i.pubkey
      AND (EXISTS (SELECT 1 FROM blobs b WHERE b.community_id = i.community_id AND b.sha256 = m.token)
        OR EXISTS (SELECT 1 FROM blob_uploads u WHERE u.community_id = i.community_id AND u.sha256 = m.token))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_blob_refs AFTER INSERT ON events
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION blob_refs_of_events();

-- The events stored before this migration.
INSERT INTO blob_refs (community_id, sha256, event_id)
SELECT DISTINCT e.community_id, m.token, e.id
FROM events e
CROSS JOIN LATERAL (
    SELECT (r[1] COLLATE "C") AS token
    FROM regexp_matches(e.raw, '(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])', 'g') AS r
) m
WHERE e.community_id IN (SELECT community_id FROM blobs UNION SELECT community_id FROM blob_uploads)
  AND m.token <> e.id AND m.token <> e.pubkey
  AND (EXISTS (SELECT 1 FROM blobs b WHERE b.community_id = e.community_id AND b.sha256 = m.token)
    OR EXISTS (SELECT 1 FROM blob_uploads u WHERE u.community_id = e.community_id AND u.sha256 = m.token))
ON CONFLICT DO NOTHING;
