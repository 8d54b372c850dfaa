-- A key's subscriptions in a community, counted by each REQ against the
-- per-key limit (shared/postgres/store subscriptions.go, Subscribe).
CREATE INDEX ws_subscriptions_key ON ws_subscriptions (community_id, pubkey);
