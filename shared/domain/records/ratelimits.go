package records

// RateHit is the cost one request adds to one rate counter
// (rate_counters, migrations/006_rate_limits.sql): its key, the start of
// its fixed window (unix seconds) and the cost.
type RateHit struct {
	Key         string
	WindowStart int64
	Cost        int64
}
