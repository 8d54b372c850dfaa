-- Each stored REQ subscription gets a number from one sequence when it is
-- stored or replaced. Live delivery to an audience too large to post inline
-- hands the fan-out function the sequence's value at the commit, and the
-- fan-out function delivers to the subscriptions numbered up to it only: a
-- subscription opened after the commit read the event as stored, and must
-- not get it live again (shared/service/fanout, dispatch.go).
CREATE SEQUENCE ws_subscriptions_seq;
ALTER TABLE ws_subscriptions ADD COLUMN seq bigint NOT NULL DEFAULT nextval('ws_subscriptions_seq');
