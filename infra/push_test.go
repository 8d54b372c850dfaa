package main

import (
	"strings"
	"testing"
)

// The push sender (docs/push.md): Lambda retries a failed batch twice,
// then sends it to the PushFailed queue; only ingest and ws-message (the
// committing functions) may invoke it, each told its name, and the query
// function knows push is on (NIP-11).
func TestPushSenderWiring(t *testing.T) {
	s := defaultStack(t)
	fns := s.ourFunctions(t)
	sender := fns["push-sender"]
	if sender == "" {
		t.Fatalf("no push-sender function in %v", fns)
	}
	var queue string
	for id := range s.ofType("AWS::SQS::Queue") {
		if strings.HasPrefix(id, pushFailedQueueID) {
			queue = id
		}
	}
	if queue == "" {
		t.Fatal("no PushFailed queue")
	}
	found := false
	for _, c := range s.ofType("AWS::Lambda::EventInvokeConfig") {
		p := c.Properties
		if !strings.Contains(js(p["FunctionName"]), sender) {
			continue
		}
		found = true
		if p["MaximumRetryAttempts"] != float64(PushRetryAttempts) || p["MaximumEventAgeInSeconds"] != float64(PushMaxEventAgeMinutes*60) {
			t.Errorf("push-sender retries: %s", js(p))
		}
		if !strings.Contains(js(p["DestinationConfig"]), queue) {
			t.Errorf("push-sender on-failure destination %s, want %s", js(p["DestinationConfig"]), queue)
		}
	}
	if !found {
		t.Error("no EventInvokeConfig for push-sender")
	}
	ref := js(map[string]any{"Ref": sender})
	for _, name := range []string{"ingest", "ws-message", "query"} {
		if got := js(s.env(t, name)["PUSH_SENDER_FUNCTION"]); got != ref {
			t.Errorf("%s PUSH_SENDER_FUNCTION %s, want %s", name, got, ref)
		}
	}
	arn := js(map[string]any{"Fn::GetAtt": []any{sender, "Arn"}})
	for name, id := range fns {
		may := false
		for _, st := range s.grantsOf(id) {
			if strings.Contains(js(st["Action"]), "lambda:InvokeFunction") && strings.Contains(js(st["Resource"]), arn) {
				may = true
			}
		}
		if want := name == "ingest" || name == "ws-message"; may != want {
			t.Errorf("%s may invoke push-sender: %v, want %v", name, may, want)
		}
	}
}
