package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// TestGreetingAndLivenessWiring (issue 37): ws-connect may invoke the push
// function and no other, and names it in PUSH_FUNCTION; the push function
// has no database, keys the challenges with the relay key, posts to
// connections and lists the open ones in the session bucket; one rule
// invokes it every minute and sends the same tick to a queue that holds it
// back 30 s, whose messages invoke it again (two ticks a minute, 30 s
// apart), with no retry of a tick the next one replaces.
func TestGreetingAndLivenessWiring(t *testing.T) {
	s := defaultStack(t)
	fns := s.ourFunctions(t)
	push, connect := fns["ws-push"], fns["ws-connect"]
	if push == "" || connect == "" {
		t.Fatalf("functions %v", fns)
	}
	pushRef := js(map[string]any{"Ref": push})
	if env := s.env(t, "ws-connect"); js(env["PUSH_FUNCTION"]) != pushRef {
		t.Errorf("ws-connect PUSH_FUNCTION %s, want %s", js(env["PUSH_FUNCTION"]), pushRef)
	}
	pushArn := js(map[string]any{"Fn::GetAtt": []any{push, "Arn"}})
	for _, st := range s.grantsOf(connect) {
		if strings.Contains(js(st["Action"]), "lambda:InvokeFunction") && !strings.Contains(js(st["Resource"]), pushArn) {
			t.Errorf("ws-connect may invoke %s, want only ws-push", js(st["Resource"]))
		}
	}
	env := s.env(t, "ws-push")
	for _, k := range []string{"WS_MANAGEMENT_ENDPOINT", "SESSION_TABLE", "RELAY_KEY_CIPHERTEXT"} {
		if env[k] == nil {
			t.Errorf("ws-push has no %s", k)
		}
	}
	for _, k := range []string{"DB_AUTH", "DB_HOST", "DB_SECRET_ARN", "FANOUT_FUNCTION"} {
		if env[k] != nil {
			t.Errorf("ws-push has %s", k)
		}
	}
	g := js(s.grantsOf(push))
	if !strings.Contains(g, "execute-api:ManageConnections") || !strings.Contains(g, "kms:Decrypt") || strings.Contains(g, "rds-db:connect") {
		t.Errorf("ws-push grants: %s", g)
	}

	queues := s.ofType("AWS::SQS::Queue")
	for id := range queues {
		if strings.HasPrefix(id, pushFailedQueueID) {
			delete(queues, id) // the push sender's on-failure queue (push_test.go)
		}
	}
	if len(queues) != 1 {
		t.Fatalf("queues %v", queues)
	}
	var queue string
	for id, q := range queues {
		queue = id
		if q.Properties["DelaySeconds"] != float64(lambdas.LivenessDelaySeconds) || q.Properties["MessageRetentionPeriod"] != float64(LivenessQueueRetentionSeconds) {
			t.Errorf("liveness queue %s", js(q.Properties))
		}
	}
	rules := s.ofType("AWS::Events::Rule")
	if len(rules) != 1 {
		t.Fatalf("rules %v", rules)
	}
	for _, r := range rules {
		if r.Properties["ScheduleExpression"] != "rate(1 minute)" {
			t.Errorf("schedule %v", r.Properties["ScheduleExpression"])
		}
		tg := js(r.Properties["Targets"])
		if !strings.Contains(tg, pushArn) || !strings.Contains(tg, js(map[string]any{"Fn::GetAtt": []any{queue, "Arn"}})) || strings.Count(tg, `"MaximumRetryAttempts":0`) != 2 {
			t.Errorf("targets %s, want ws-push and the queue, no retries", tg)
		}
	}
	s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
		"FunctionName":   map[string]any{"Ref": push},
		"EventSourceArn": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}},
	})

	// Media off: the open connections are the sessions' table's all the
	// same, so the tick stays, and so does the greeting.
	off := synth(t, map[string]any{"media": "false"})
	on := len(s.ofType("AWS::SQS::Queue")) + len(s.ofType("AWS::Events::Rule"))
	if n := len(off.ofType("AWS::SQS::Queue")) + len(off.ofType("AWS::Events::Rule")); n != on {
		t.Errorf("media off: %d liveness resources, want %d as with media", n, on)
	}
	if env := off.env(t, "ws-connect"); env["PUSH_FUNCTION"] == nil {
		t.Error("media off: ws-connect does not greet")
	}
}
