-- Issue 52: a channel's archive (Buzz's 9002 ["archived","true"|"false"]):
-- while archived_at is set, the channel refuses every write but the 9002
-- that unarchives it; reads go on and its 39000 carries ["archived","true"].
ALTER TABLE channels ADD COLUMN archived_at bigint;

-- Issue 52: read markers of Buzz's /buzz/v1/me/read-state, per key, channel
-- and context: '' the channel's timeline, '*' the whole-channel cut
-- (mark_channel_read: the timeline and every thread), else a thread's
-- root id. A marker is the (created_at, id) of the message read through,
-- in the order a channel window shows them (NIP-RS's per-context
-- timestamp, with the id breaking a tie); it only moves forward.
CREATE TABLE read_marks (
    community_id  text   NOT NULL,
    pubkey        text   COLLATE "C" NOT NULL,
    channel_id    text   COLLATE "C" NOT NULL,
    context       text   COLLATE "C" NOT NULL,
    at            bigint NOT NULL,
    event_id      text   COLLATE "C" NOT NULL,
    PRIMARY KEY (community_id, pubkey, channel_id, context)
);
