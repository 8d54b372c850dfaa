-- Push delivery rates (issue 51, docs/push.md): per-minute counters the
-- push sender takes before each try, all of a delivery's scopes or none in
-- one transaction (store.PushRatesTake), so the caps hold across
-- concurrent sends and concurrent runs of the sender: per callback host
-- (push.CallbacksPerHostPerMinute), per lease endpoint, and per community
-- (push.DeliveriesPerCommunityPerMinute). Rows older than a few minutes
-- are deleted by the sender. The per-URL count over push_deliveries that
-- they replace is gone, and its index with it.
CREATE TABLE push_rates (
    scope  text    COLLATE "C" NOT NULL,
    minute bigint  NOT NULL,
    n      integer NOT NULL,
    PRIMARY KEY (scope, minute)
);
CREATE INDEX push_rates_minute ON push_rates (minute);

DROP INDEX push_deliveries_rate;
