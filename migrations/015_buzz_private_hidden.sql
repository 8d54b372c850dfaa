-- Buzz's visibility=private is hidden too (issue 36, nip29.VisibilityFlags):
-- Buzz scopes every read of a private channel, its metadata (39000-39003)
-- included, to its members, so a Buzz client's private channel must not be
-- found by a non-member. Until now it was private, restricted and closed,
-- and hidden only as a system channel.
--
-- A private channel that is not hidden gets the flag when its flags were
-- last set by Buzz's visibility tag: the newest of its 9007 and 9002s that
-- set flags (a visibility tag or a NIP-29 flag tag) names no NIP-29 flag, or
-- none is stored (channels older than NIP-29's flags were all Buzz's). A
-- group whose flags were last set by NIP-29's own flag tags keeps them:
-- private without hidden is NIP-29's rule (its metadata stays readable).
-- Its stored 39000 shows hidden from the next change of the channel; reads
-- and live delivery follow this column at once.
UPDATE channels c SET hidden = true
WHERE c.visibility = 'private' AND NOT c.hidden
  AND NOT COALESCE((
    SELECT EXISTS (SELECT 1 FROM jsonb_array_elements((e.raw::jsonb)->'tags') t
                   WHERE t->>0 IN ('private', 'restricted', 'hidden', 'closed', 'public', 'open'))
    FROM events e
    WHERE e.community_id = c.community_id AND e.channel_id = c.id AND e.kind IN (9007, 9002)
      AND EXISTS (SELECT 1 FROM jsonb_array_elements((e.raw::jsonb)->'tags') t
                  WHERE t->>0 IN ('visibility', 'private', 'restricted', 'hidden', 'closed', 'public', 'open'))
    ORDER BY e.created_at DESC, e.id DESC
    LIMIT 1), false);
