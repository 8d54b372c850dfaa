package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// The statements behind a window (rows, both aux hops, summaries), a thread
// panel and the NIP-CL discovery filters use indexes, never a sequential scan
// of events, event_tags or thread_metadata: on a freshly bulk-loaded table
// that was never analyzed, and again after ANALYZE (design.md §6), each with
// the custom plan and the generic plan a prepared statement may switch to.
func TestExplainUsesIndexes(t *testing.T) {
	e := newEnv(t)
	if _, err := e.db.Exec(e.ctx, `ALTER TABLE events SET (autovacuum_enabled = false);
ALTER TABLE event_tags SET (autovacuum_enabled = false);
ALTER TABLE thread_metadata SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	agent := newUser()
	ch := uuid.NewString()
	if _, err := testkit.Seed(e.ctx, e.db, testkit.SeedOptions{Channel: ch, Events: 40_000, Start: t0 - 100_000, PerSecond: 5, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	other := e.channel(agent, nostr.Tag{"t", "agent-config"})
	root := e.msg(agent, other, t0+10, "root")
	e.reply(agent, other, root, t0+11, "reply", false)

	var cursorAt int64
	var cursorID string
	if err := e.db.QueryRow(e.ctx, `SELECT created_at, id FROM events WHERE channel_id = $1 AND kind = 9 AND top_level
ORDER BY created_at DESC, id OFFSET 20000 LIMIT 1`, ch).Scan(&cursorAt, &cursorID); err != nil {
		t.Fatal(err)
	}
	var threadRoot string
	if err := e.db.QueryRow(e.ctx, `SELECT event_id FROM thread_metadata WHERE channel_id = $1 AND reply_count > 0 LIMIT 1`, ch).Scan(&threadRoot); err != nil {
		t.Fatal(err)
	}
	requests := []string{
		windowBody(ch, `,"limit":50,"include_aux":true,"include_summaries":true`),
		windowBody(ch, fmt.Sprintf(`,"limit":50,"include_aux":true,"include_summaries":true,"until":%d,"before_id":%q`, cursorAt, cursorID)),
		// The window applies tag filters and search before its limit.
		windowBody(ch, `,"limit":50,"#t":["release"]`),
		windowBody(ch, `,"limit":50,"search":"deploy"`),
		fmt.Sprintf(`[{"#e":[%q],"depth_limit":64,"include_aux":true}]`, threadRoot),
		fmt.Sprintf(`[{"kinds":[39000],"#P":[%q]}]`, agent.pk),
		`[{"kinds":[39000],"#t":["agent-config"]}]`,
		fmt.Sprintf(`[{"kinds":[39000,39001,39002],"#d":[%q]}]`, other),
		fmt.Sprintf(`[{"kinds":[39002],"#p":[%q]}]`, agent.pk),
		fmt.Sprintf(`[{"kinds":[9],"#h":[%q],"limit":50}]`, ch),
	}
	check := func(stage string) {
		for _, body := range requests {
			type stmt struct {
				sql  string
				args []any
			}
			var stmts []stmt
			e.q.trace = func(sql string, args []any) { stmts = append(stmts, stmt{sql, args}) }
			e.query(agent, body)
			e.q.trace = nil
			for _, s := range stmts {
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					if bad := seqScans(t, e, mode, s.sql, s.args); bad != "" {
						t.Errorf("%s, %s: %s\nrequest %s\n%s", stage, mode, bad, body, s.sql)
					}
				}
			}
		}
	}
	check("unanalyzed")
	if err := e.db.Analyze(e.ctx); err != nil {
		t.Fatal(err)
	}
	check("analyzed")
}

// seqScans returns a description of the sequential scans of the big tables
// in the plan of sql, "" when there are none.
func seqScans(t *testing.T, e *env, mode, sql string, args []any) string {
	t.Helper()
	conn, err := e.db.Acquire(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(e.ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(e.ctx, "RESET plan_cache_mode")
	var plan []byte
	if mode == "force_generic_plan" {
		// A generic plan is what PREPARE + EXPLAIN EXECUTE shows.
		if _, err := conn.Exec(e.ctx, "PREPARE q AS "+sql); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(e.ctx, "DEALLOCATE q")
		lits := make([]string, len(args))
		for i, a := range args {
			lits[i] = literal(t, a)
		}
		err = conn.QueryRow(e.ctx, "EXPLAIN (FORMAT JSON) EXECUTE q("+strings.Join(lits, ", ")+")").Scan(&plan)
	} else {
		err = conn.QueryRow(e.ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&plan)
	}
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
	}
	var root []map[string]any
	if err := json.Unmarshal(plan, &root); err != nil {
		t.Fatal(err)
	}
	var found []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Node Type"] == "Seq Scan" {
			switch rel := n["Relation Name"]; rel {
			case "events", "event_tags", "thread_metadata":
				found = append(found, fmt.Sprintf("Seq Scan on %s", rel))
			}
		}
		if kids, ok := n["Plans"].([]any); ok {
			for _, k := range kids {
				walk(k.(map[string]any))
			}
		}
	}
	walk(root[0]["Plan"].(map[string]any))
	return strings.Join(found, ", ")
}

// literal renders a test argument as SQL for EXPLAIN EXECUTE.
func literal(t *testing.T, a any) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case string:
		return q(v)
	case int, int64:
		return fmt.Sprint(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = q(s)
		}
		return "ARRAY[" + strings.Join(parts, ",") + "]::text[]"
	case []int:
		parts := make([]string, len(v))
		for i, n := range v {
			parts[i] = fmt.Sprint(n)
		}
		return "'{" + strings.Join(parts, ",") + "}'::integer[]"
	}
	t.Fatalf("literal: unsupported %T", a)
	return ""
}
