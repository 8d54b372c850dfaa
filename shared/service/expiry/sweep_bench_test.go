package expiry_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/expiry"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkSweep100k is the sweep's figure (docs/protocol.md): 100,000
// expired channel messages, each with two tag rows and a thread row, among
// 100,000 that have not expired, deleted by one Sweep in batches of
// DefaultBatch. Run it once:
//
//	go test -run '^$' -bench Sweep100k -benchtime 1x ./shared/service/expiry/
func BenchmarkSweep100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	st, db := testkit.NewStoreDB(b, store.Options{MaxConns: 4})
	now := time.Now().Unix()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Half expired (expires_at in the past), half ahead.
		if _, err := db.Exec(ctx, `
INSERT INTO events (community_id, id, pubkey, created_at, kind, channel_id, raw, expires_at)
SELECT 'default', md5(i::text || $3::text) || md5(i::text), repeat('a', 64), $1 - i % 1000, 9, 'c', '{}',
       CASE WHEN i % 2 = 0 THEN $1 - 10 ELSE $1 + 100000 END
FROM generate_series(1, $2 * 2) i`, now, n, strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(ctx, `
INSERT INTO event_tags (community_id, event_id, name, value, kind, created_at, channel_id)
SELECT e.community_id, e.id, t.name, t.value, 9, e.created_at, 'c'
FROM events e, (VALUES ('t', 'x'), ('p', repeat('b', 64))) t(name, value)`); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(ctx, `
INSERT INTO thread_metadata (community_id, event_id, channel_id, created_at) SELECT community_id, id, 'c', created_at FROM events`); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(ctx, `ANALYZE events; ANALYZE event_tags; ANALYZE thread_metadata`); err != nil {
			b.Fatal(err)
		}
		s := &expiry.Sweeper{Store: st}
		b.StartTimer()
		start := time.Now()
		r, err := s.Sweep(ctx)
		took := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if r.Deleted != n || !r.Done {
			b.Fatalf("sweep = %+v, want %d deleted", r, n)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "events/s")
		b.ReportMetric(float64(r.Batches), "batches")
		var left int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM events WHERE expires_at <= $1`, now).Scan(&left); err != nil || left != 0 {
			b.Fatalf("%d expired events left (%v)", left, err)
		}
		if _, err := db.Exec(ctx, `TRUNCATE events, event_tags, thread_metadata`); err != nil {
			b.Fatal(err)
		}
	}
}
