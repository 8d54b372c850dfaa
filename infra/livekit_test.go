package main

import (
	"strings"
	"testing"
)

// TestLiveKitSecretReadByQueryAndIngestOnly: with -c livekitSecret, query
// (the token endpoint) and ingest (the webhook) get LIVEKIT_SECRET_ARN and
// secretsmanager:GetSecretValue on that one secret; ws-message gets the
// ARN (its 39000 carries the livekit tag) but no grant to read it.
func TestLiveKitSecretReadByQueryAndIngestOnly(t *testing.T) {
	const arn = "arn:aws:secretsmanager:eu-west-2:123456789012:secret:buzz/livekit-AbCdEf"
	s := synth(t, map[string]any{"livekitSecret": arn})
	fns := s.ourFunctions(t)
	for _, name := range []string{"query", "ingest", "ws-message"} {
		if got := s.env(t, name)["LIVEKIT_SECRET_ARN"]; got != arn {
			t.Errorf("%s: LIVEKIT_SECRET_ARN %v", name, got)
		}
	}
	reads := func(name string) bool {
		for _, st := range s.grantsOf(fns[name]) {
			if strings.Contains(js(st["Action"]), "secretsmanager:GetSecretValue") && strings.Contains(js(st["Resource"]), arn) {
				return true
			}
		}
		return false
	}
	if !reads("query") || !reads("ingest") {
		t.Error("query or ingest cannot read the LiveKit secret")
	}
	if reads("ws-message") || reads("fanout") {
		t.Error("a function other than query and ingest may read the LiveKit secret")
	}
	if def := synth(t, nil); def.env(t, "query")["LIVEKIT_SECRET_ARN"] != nil {
		t.Error("LIVEKIT_SECRET_ARN without -c livekitSecret")
	}
}
