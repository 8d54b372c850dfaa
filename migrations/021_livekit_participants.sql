-- NIP-29 LiveKit: who is live in each group's room, as LiveKit's webhooks
-- (participant_joined, participant_left) told the relay; the relay-signed
-- 39004 lists their pubkeys. One row per LiveKit identity (a key may join
-- more than once). shared/postgres/store livekit.go.
CREATE TABLE livekit_participants (
  community_id text NOT NULL REFERENCES communities (id),
  channel_id text NOT NULL,
  identity text NOT NULL,
  pubkey text NOT NULL,
  joined_at bigint NOT NULL,
  PRIMARY KEY (community_id, channel_id, identity)
);
