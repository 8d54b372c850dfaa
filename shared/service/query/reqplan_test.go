package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestOneChannelReqWalksChannelIndex: REQ {"kinds":[9],"#h":[ch],"limit":50}
// on a channel whose events are all older than another channel's walks an
// index led by the channel, on a just-loaded table and after ANALYZE. Left to
// estimates, the plan walked events_time and filtered out every newer event
// of the other channel (docs/benchmarks.md, issue 12).
func TestOneChannelReqWalksChannelIndex(t *testing.T) {
	e := newEnv(t)
	if _, err := e.db.Exec(e.ctx, `ALTER TABLE events SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	old, busy := uuid.NewString(), uuid.NewString()
	if _, err := testkit.Seed(e.ctx, e.db, testkit.SeedOptions{Channel: old, Events: 10_000, Start: t0 - 200_000, PerSecond: 5, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.Seed(e.ctx, e.db, testkit.SeedOptions{Channel: busy, Events: 20_000, Start: t0 - 100_000, PerSecond: 5, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	reader := newUser()
	body := fmt.Sprintf(`[{"kinds":[9],"#h":[%q],"limit":50}]`, old)
	check := func(stage string) {
		var sqls []string
		var argss [][]any
		e.q.trace = func(sql string, args []any) { sqls, argss = append(sqls, sql), append(argss, args) }
		e.query(reader, body)
		e.q.trace = nil
		found := false
		for i, sql := range sqls {
			if !strings.Contains(sql, "FROM events e") {
				continue
			}
			found = true
			var plan []byte
			if err := e.db.QueryRow(e.ctx, "EXPLAIN (FORMAT JSON) "+sql, argss[i]...).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			var root []map[string]any
			if err := json.Unmarshal(plan, &root); err != nil {
				t.Fatal(err)
			}
			var idx []string
			var walk func(n map[string]any)
			walk = func(n map[string]any) {
				if n["Relation Name"] == "events" {
					idx = append(idx, fmt.Sprint(n["Node Type"], " ", n["Index Name"]))
				}
				if kids, ok := n["Plans"].([]any); ok {
					for _, k := range kids {
						walk(k.(map[string]any))
					}
				}
			}
			walk(root[0]["Plan"].(map[string]any))
			// Either index led by the channel (events_window is its
			// partial twin without deleted rows and non-timeline kinds).
			if len(idx) == 0 || !(strings.HasSuffix(idx[0], " events_channel_time") || strings.HasSuffix(idx[0], " events_window")) {
				t.Errorf("%s: events scanned by %v, want an index led by the channel\n%s", stage, idx, sql)
			}
		}
		if !found {
			t.Fatalf("%s: no statement on events traced", stage)
		}
	}
	check("just loaded")
	if err := e.db.Analyze(e.ctx); err != nil {
		t.Fatal(err)
	}
	check("analyzed")
}
