package main

import (
	"strings"
	"testing"
)

// TestSessionGrants: the stack has one on-demand sessions' table keyed pk
// and sk with TTL on ttl and no point-in-time recovery, and the session
// functions, and they only, get SESSION_TABLE (its name) and the item,
// batch and query actions on it (never a scan).
func TestSessionGrants(t *testing.T) {
	s := defaultStack(t)
	var id string
	for k, r := range s.ofType("AWS::DynamoDB::Table") {
		if id != "" {
			t.Fatalf("two tables: %s and %s", id, k)
		}
		id = k
		p := r.Properties
		got := js(map[string]any{"BillingMode": p["BillingMode"], "KeySchema": p["KeySchema"], "TimeToLiveSpecification": p["TimeToLiveSpecification"],
			"PointInTimeRecoverySpecification": p["PointInTimeRecoverySpecification"]})
		want := `{"BillingMode":"PAY_PER_REQUEST","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],` +
			`"PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":false},"TimeToLiveSpecification":{"AttributeName":"ttl","Enabled":true}}`
		if got != want {
			t.Errorf("sessions table:\n got %s\nwant %s", got, want)
		}
	}
	if id == "" {
		t.Fatal("no sessions table")
	}
	table := js(map[string]any{"Fn::GetAtt": []any{id, "Arn"}})
	for name, fid := range s.ourFunctions(t) {
		got := map[string]string{}
		for _, st := range s.grantsOf(fid) {
			if sid, _ := st["Sid"].(string); strings.HasPrefix(sid, "Session") {
				got[sid] = js(st["Action"]) + " on " + js(st["Resource"])
			}
		}
		want := map[string]string{}
		if SessionFunctions[name] {
			want["SessionTable"] = js(SessionActions) + " on " + table
		}
		if js(got) != js(want) {
			t.Errorf("%s session grants:\n got %s\nwant %s", name, js(got), js(want))
		}
		env := s.env(t, name)
		if v, ok := env["SESSION_TABLE"]; ok != SessionFunctions[name] || (ok && js(v) != `{"Ref":"`+id+`"}`) {
			t.Errorf("%s: SESSION_TABLE %s", name, js(v))
		}
	}
	// fanout (the audience), ingest and query (the marks), ws-message,
	// ws-disconnect, ws-push (the open connections), workflow-runner (the
	// audience of what a run posts).
	if len(SessionFunctions) != 7 {
		t.Errorf("session functions %v", SessionFunctions)
	}
}
