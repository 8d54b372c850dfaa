-- Buzz's DM channels (41012 hide, NIP-DV): when a participant hid the DM
-- from their own list; NULL while shown. Opening the DM again clears it.
ALTER TABLE channel_members ADD COLUMN hidden_at bigint;
