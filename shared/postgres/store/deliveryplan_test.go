package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestDeliveryPlansUseKeys is the trap of a new database: pgx prepares each
// statement, and after five runs Postgres may keep a generic plan made while
// the tables were small and never analyzed, when "community_id = $1" looks
// like one row. Live delivery runs its lookup after every committed event,
// so that plan must reach the batch's rows by their keys, never read the
// community's events and filter them. The plans are made on a 60-event
// community (plan_cache_mode = force_generic_plan); every scan of a keyed
// table must then be an index scan on its key, and, run again over a
// 3,000-event channel, no node may return more rows than the batch needs.
func TestDeliveryPlansUseKeys(t *testing.T) {
	ctx := context.Background()
	st, conn := freshConn(t)
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{
		"events":                       "(text, text[])",
		"roots":                        "(text, text[])",
		"system":                       "(text, text[])",
		"subscriptions":                "(text, text[], text[], bigint, bigint)",
		"audience bounds":              "(text, text[], integer)",
		"audience range":               "(text, text[], bigint, text, text, bigint)",
		"subscriptions of one channel": "(text, text, bigint, bigint)",
		"system of one channel":        "(text, text)",
	}
	argsFor := func(ids []string, channel string) map[string]string {
		arr := "'{" + strings.Join(ids, ",") + "}'"
		return map[string]string{
			"events":                       "('default', " + arr + ")",
			"roots":                        "('default', " + arr + ")",
			"system":                       "('default', '{" + channel + "}')",
			"subscriptions":                "('default', " + arr + ", '{" + channel + "}', 0, 201)",
			"audience bounds":              "('default', '{" + channel + "}', 500)",
			"audience range":               "('default', '{" + channel + "}', 1000, '', 'z', 0)",
			"subscriptions of one channel": "('default', '" + channel + "', 0, 201)",
			"system of one channel":        "('default', '" + channel + "')",
		}
	}
	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: testkit.ChannelID(), Events: 60, Start: 1_600_000_000, Seed: 3})
	channel := testkit.ChannelID()
	for name, sql := range store.DeliveryStatements {
		if _, err := conn.Exec(ctx, "PREPARE delivery_"+strings.ReplaceAll(name, " ", "_")+" "+types[name]+" AS "+sql); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
		plan := explain(t, conn, "delivery_"+strings.ReplaceAll(name, " ", "_")+argsFor([]string{strings.Repeat("0", 64)}, channel)[name])
		for _, n := range planNodes(t, plan) {
			key, keyed := deliveryKeys[n.Relation]
			if keyed && !strings.Contains(n.indexConds(), key+" =") && !strings.Contains(n.indexConds(), key+" = ANY") {
				t.Errorf("%s: %s on %s (index cond %q) does not look its rows up by %s\n%s",
					name, n.Type, n.Relation, n.indexConds(), key, plan)
			}
			// A condition on the key is not enough: the index must lead
			// with it (an index on (community_id, created_at, id) takes
			// "id =" as a condition and walks the whole community). The
			// statements of the usual commit must pass this too; the
			// array statements do not on a table never analyzed (the
			// planner's costs of the key and of events_time tie there and
			// the older index wins), which lasts until the first
			// autovacuum ANALYZE (docs/benchmarks.md).
			if idx := n.indexNames(); keyed && idx != "" && !strings.HasSuffix(idx, "_pkey") && oneChannel[name] {
				t.Errorf("%s: %s on %s reads index %s, not the table's key\n%s", name, n.Type, n.Relation, idx, plan)
			}
		}
	}

	testkit.SeedChannel(t, dbOf(st), testkit.SeedOptions{Channel: channel, Events: 3000, Start: 1_700_000_000, Seed: 7})
	var ids []string
	rows, err := conn.Query(ctx, `SELECT id FROM events WHERE community_id = 'default' AND channel_id = $1 ORDER BY created_at DESC LIMIT 3`, channel)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || len(ids) != 3 {
		t.Fatalf("seeded ids: %v %v", ids, rows.Err())
	}
	const most = 10 // the batch's 3 events, their channel and thread rows
	for name := range store.DeliveryStatements {
		plan := explain(t, conn, "delivery_"+strings.ReplaceAll(name, " ", "_")+argsFor(ids, channel)[name])
		for _, n := range planNodes(t, plan) {
			if got := n.Rows * n.Loops; n.Relation != "" && got > most {
				t.Errorf("%s: %s on %s returned %.0f rows (at most %d expected): the plan reads the table, not the batch\n%s",
					name, n.Type, n.Relation, got, most, plan)
			}
		}
	}
}

// oneChannel are the statements of the usual commit's delivery.
var oneChannel = map[string]bool{"subscriptions of one channel": true, "system of one channel": true}

// deliveryKeys is the column each table of the delivery lookup is reached
// by.
var deliveryKeys = map[string]string{
	"events":                   "id",
	"thread_metadata":          "event_id",
	"channels":                 "id",
	"ws_subscription_channels": "channel_id",
	"ws_subscriptions":         "connection_id",
	"ws_connections":           "id",
}

// explain runs EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE of a prepared
// statement with its arguments.
func explain(t *testing.T, conn *pgxpool.Conn, execute string) []byte {
	t.Helper()
	var plan []byte
	if err := conn.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "+execute).Scan(&plan); err != nil {
		t.Fatalf("%s: %v", execute, err)
	}
	return plan
}

type planNode struct {
	Type      string  `json:"Node Type"`
	Relation  string  `json:"Relation Name"`
	IndexCond string  `json:"Index Cond"`
	IndexName string  `json:"Index Name"`
	Rows      float64 `json:"Actual Rows"`
	// RemovedByFilter are rows a scan read and dropped.
	RemovedByFilter float64 `json:"Rows Removed by Filter"`
	Loops           float64 `json:"Actual Loops"`
	Plans           []planNode
}

// indexConds are the index conditions a scan reaches its rows by: its own,
// or those of a bitmap heap scan's index scans ("" for a sequential scan).
func (n planNode) indexConds() string {
	return n.ofIndexScans(func(c planNode) string { return c.IndexCond })
}

// indexNames are the indexes a scan reads, the same way.
func (n planNode) indexNames() string {
	return n.ofIndexScans(func(c planNode) string { return c.IndexName })
}

// ofIndexScans is field of n, or of a bitmap heap scan's index scans,
// joined.
func (n planNode) ofIndexScans(field func(planNode) string) string {
	if n.Type != "Bitmap Heap Scan" {
		return field(n)
	}
	var out []string
	for _, c := range n.Plans {
		out = append(out, c.ofIndexScans(field))
	}
	return strings.Join(out, " ")
}

// planNodes flattens an EXPLAIN (FORMAT JSON) document.
func planNodes(t *testing.T, doc []byte) []planNode {
	t.Helper()
	var top []struct{ Plan planNode }
	if err := json.Unmarshal(doc, &top); err != nil || len(top) != 1 {
		t.Fatal(fmt.Errorf("plan: %v: %s", err, doc))
	}
	var out []planNode
	var walk func(n planNode)
	walk = func(n planNode) {
		out = append(out, n)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(top[0].Plan)
	return out
}
