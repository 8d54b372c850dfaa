package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkWindow measures one channel-window request (limit 50,
// include_summaries, include_aux) on a 10k-event and a 1M-event channel of
// the same database, seeded with COPY and analyzed. Requests cycle through
// the head page and cursors spread over the whole channel. It reports p50
// and p99 in milliseconds. Only runs with -bench (seeding 1M takes minutes):
//
//	source localdev/pg.sh && go test -run '^$' -bench BenchmarkWindow -benchtime 2000x ./shared/query/
func BenchmarkWindow(b *testing.B) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(b, store.Options{MaxConns: 2})
	relay, err := signer.FromHex(nostr.GeneratePrivateKey())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().Unix() - 86400*365
	sizes := []struct {
		name   string
		events int
	}{{"10k", 10_000}, {"1M", 1_000_000}}
	channels := map[string]string{}
	for i, s := range sizes {
		ch := uuid.NewString()
		t := time.Now()
		if _, err := testkit.Seed(ctx, db, testkit.SeedOptions{Channel: ch, Events: s.events, Start: start, PerSecond: 5, Seed: uint64(i + 1)}); err != nil {
			b.Fatal(err)
		}
		b.Logf("seeded %s in %s", s.name, time.Since(t).Round(time.Millisecond))
		channels[s.name] = ch
	}
	if err := db.Analyze(ctx); err != nil {
		b.Fatal(err)
	}
	q := New(st, relay)
	reader := nostr.GeneratePrivateKey()
	for _, s := range sizes {
		bodies, err := windowBodies(ctx, db, channels[s.name], 64)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				evs, err := q.Query(ctx, "default", "relay.test", reader, bodies[i%len(bodies)])
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
				if len(evs) < 51 {
					b.Fatalf("window returned %d events", len(evs))
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}

// windowBodies returns the head request and n-1 cursor requests at random
// top-level rows of the channel.
func windowBodies(ctx context.Context, db *dbtest.DB, ch string, n int) ([][]byte, error) {
	// A repeatable sample, above the channel's 200 oldest top-level rows so
	// that every cursor has a full page (50 rows and the has_more probe)
	// below it.
	rows, err := db.Query(ctx, `SELECT created_at, id FROM events TABLESAMPLE SYSTEM (5) REPEATABLE (7)
WHERE community_id = 'default' AND channel_id = $1 AND kind = 9 AND top_level AND deleted_at IS NULL
  AND created_at > (SELECT created_at FROM events WHERE community_id = 'default' AND channel_id = $1
    AND kind = 9 AND top_level AND deleted_at IS NULL ORDER BY created_at ASC OFFSET 200 LIMIT 1)
LIMIT 5000`, ch)
	if err != nil {
		return nil, fmt.Errorf("sample cursors: %w", err)
	}
	type cur struct {
		at int64
		id string
	}
	var curs []cur
	for rows.Next() {
		var c cur
		if err := rows.Scan(&c.at, &c.id); err != nil {
			return nil, err
		}
		curs = append(curs, c)
	}
	rows.Close()
	if len(curs) == 0 {
		return nil, fmt.Errorf("no cursors sampled")
	}
	r := rand.New(rand.NewPCG(1, 2))
	base := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "top_level": true, "limit": 50,
		"include_summaries": true, "include_aux": true}
	head, _ := json.Marshal([]any{base})
	out := [][]byte{head}
	for len(out) < n {
		c := curs[r.IntN(len(curs))]
		f := map[string]any{}
		for k, v := range base {
			f[k] = v
		}
		f["until"], f["before_id"] = c.at, c.id
		body, _ := json.Marshal([]any{f})
		out = append(out, body)
	}
	return out, nil
}
