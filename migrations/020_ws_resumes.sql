-- Resume records of live subscriptions (session.Resume) for the Postgres
-- session store (BUZZ_SESSIONS=0; DynamoDB keeps them in its table):
-- shared/postgres/store resumes.go. Expired rows are deleted by the next
-- save of the same key.
CREATE TABLE ws_resumes (
  community_id text NOT NULL REFERENCES communities (id),
  pubkey text NOT NULL,
  sub text NOT NULL,
  shape text NOT NULL,
  since bigint[] NOT NULL,
  lim bigint[] NOT NULL,
  wrote bigint NOT NULL,
  answered_at bigint NOT NULL,
  newest bigint NOT NULL DEFAULT 0,
  expires_at bigint NOT NULL,
  PRIMARY KEY (community_id, pubkey, sub, shape)
);
