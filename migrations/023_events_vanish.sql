-- Requests to vanish (NIP-62, kind 62) by key, for the check every write
-- makes (store.BansCheck, vanishedSQL): without it that check walked
-- events_kind_time to the kind-62 range beside the pages every insert
-- writes, and cost more under load than the insert itself. Only kind 62
-- rows enter it: it stays as small as the requests to vanish.
CREATE INDEX events_vanish ON events (community_id, pubkey, created_at DESC) WHERE kind = 62;
