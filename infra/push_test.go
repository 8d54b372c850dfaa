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

// The push dialer (issue 55, egress by need): outside the VPC, with no
// grant beyond its logs (no key, secret, table, bucket or invoke) and no
// database or key in its environment; only the push sender may invoke it,
// and the sender, named it in PUSH_DIALER_FUNCTION with the Lambda
// endpoint it reaches from the VPC, stays in the VPC's app subnets with
// the functions' security group: its network is what it was (::/0 through
// the egress-only gateway, IPv4 only to DynamoDB's gateway endpoint:
// TestDefaultEgressIsIPv6WithoutNAT, TestSessionTableGatewayEndpointOverIPv6).
func TestPushDialerOutsideTheVPC(t *testing.T) {
	s := defaultStack(t)
	fns := s.ourFunctions(t)
	dialer, sender := fns["push-dialer"], fns["push-sender"]
	if dialer == "" || sender == "" {
		t.Fatalf("functions %v", fns)
	}
	if vc := s.res[dialer].Properties["VpcConfig"]; vc != nil {
		t.Errorf("push-dialer VpcConfig %s, want none", js(vc))
	}
	for k := range s.env(t, "push-dialer") {
		if strings.HasPrefix(k, "DB_") || strings.HasPrefix(k, "RELAY_") || strings.HasPrefix(k, "PUSH_") ||
			k == "SESSION_TABLE" || k == "LAMBDA_ENDPOINT" || strings.HasPrefix(k, "MEDIA_") || strings.HasSuffix(k, "_SECRET_ARN") {
			t.Errorf("push-dialer has %s in its environment", k)
		}
	}
	if g := s.grantsOf(dialer); len(g) != 0 {
		t.Errorf("push-dialer's role has statements %s, want none", js(g))
	}
	vc, _ := s.res[sender].Properties["VpcConfig"].(map[string]any)
	if vc == nil || !strings.Contains(js(vc["SubnetIds"]), "Vpcapp") || !strings.Contains(js(vc["SecurityGroupIds"]), "FunctionsSg") {
		t.Errorf("push-sender VpcConfig %s, want the app subnets and the functions' group", js(vc))
	}
	env := s.env(t, "push-sender")
	if got := js(env["PUSH_DIALER_FUNCTION"]); got != js(map[string]any{"Ref": dialer}) {
		t.Errorf("push-sender PUSH_DIALER_FUNCTION %s", got)
	}
	if !strings.Contains(js(env["LAMBDA_ENDPOINT"]), ".api.aws") {
		t.Errorf("push-sender LAMBDA_ENDPOINT %s, want Lambda's dual-stack endpoint", js(env["LAMBDA_ENDPOINT"]))
	}
	arn := js(map[string]any{"Fn::GetAtt": []any{dialer, "Arn"}})
	for name, id := range fns {
		may := false
		for _, st := range s.grantsOf(id) {
			if strings.Contains(js(st["Action"]), "lambda:InvokeFunction") && strings.Contains(js(st["Resource"]), arn) {
				may = true
			}
		}
		if want := name == "push-sender"; may != want {
			t.Errorf("%s may invoke push-dialer: %v, want %v", name, may, want)
		}
	}
}

// The PushFailed queue has its alarm (AlarmPushFailed) on every profile:
// a message visible in the queue notifies the alarm topic.
func TestPushFailedQueueHasItsAlarm(t *testing.T) {
	for name, s := range map[string]synthesized{"default": defaultStack(t), "managed": managedStack(t)} {
		var queue string
		for id := range s.ofType("AWS::SQS::Queue") {
			if strings.HasPrefix(id, pushFailedQueueID) {
				queue = id
			}
		}
		found := false
		for id, a := range s.ofType("AWS::CloudWatch::Alarm") {
			p := a.Properties
			if !strings.HasPrefix(id, "pushfailed") && !strings.Contains(js(p["Dimensions"]), queue) {
				continue
			}
			found = true
			if p["MetricName"] != "ApproximateNumberOfMessagesVisible" || !strings.Contains(js(p["Dimensions"]), queue) ||
				p["Threshold"] != float64(1) || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" {
				t.Errorf("%s: push-failed alarm %s", name, js(p))
			}
			if !strings.Contains(js(p["AlarmActions"]), "Alarm") {
				t.Errorf("%s: push-failed alarm notifies %s", name, js(p["AlarmActions"]))
			}
		}
		if queue == "" || !found {
			t.Errorf("%s: queue %q, alarm found %v", name, queue, found)
		}
	}
}
