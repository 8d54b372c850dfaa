package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGIFsOnlyWithTheirSecret: by default no KLIPY secret, no GIF route and
// no KLIPY_SECRET_ARN anywhere (the relay then does not advertise GIFs in
// NIP-11). With -c gifs=true: one secret whose value is the NoEcho
// parameter (the key never in the template), both GIF routes to the query
// function, KLIPY_SECRET_ARN on query alone, and GetSecretValue on that
// secret for query's role alone; cdk-nag stays clean (the synth runs it).
func TestGIFsOnlyWithTheirSecret(t *testing.T) {
	gifRoutes := func(s synthesized) int {
		n := 0
		for _, r := range s.ofType("AWS::ApiGatewayV2::Route") {
			if k, _ := r.Properties["RouteKey"].(string); strings.Contains(k, "/gifs/") {
				n++
			}
		}
		return n
	}
	klipyEnv := func(t *testing.T, s synthesized) map[string]bool {
		out := map[string]bool{}
		for name, id := range s.ourFunctions(t) {
			env, _ := s.res[id].Properties["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			if _, ok := vars["KLIPY_SECRET_ARN"]; ok {
				out[name] = true
			}
		}
		return out
	}

	off := defaultStack(t)
	if n := len(off.ofType("AWS::SecretsManager::Secret")); n != 1 {
		t.Errorf("default: %d secrets, want the master secret only", n)
	}
	if n := gifRoutes(off); n != 0 {
		t.Errorf("default: %d GIF routes deployed without a key", n)
	}
	if e := klipyEnv(t, off); len(e) != 0 {
		t.Errorf("default: KLIPY_SECRET_ARN on %v", e)
	}

	on := synth(t, map[string]any{"gifs": true})
	var secretID string
	for id, r := range on.ofType("AWS::SecretsManager::Secret") {
		if strings.HasPrefix(id, "KlipySecret") {
			secretID = id
			if v, _ := json.Marshal(r.Properties["SecretString"]); string(v) != `{"Ref":"`+KlipyKeyParameter+`"}` {
				t.Errorf("KLIPY secret's value %s, want the NoEcho parameter", v)
			}
		}
	}
	if secretID == "" {
		t.Fatal("gifs=true: no KLIPY secret")
	}
	params := on.tpl.ToJSON()
	p, _ := (*params)["Parameters"].(map[string]any)[KlipyKeyParameter].(map[string]any)
	if p["NoEcho"] != true {
		t.Errorf("parameter %s: %v, want NoEcho", KlipyKeyParameter, p)
	}
	if n := gifRoutes(on); n != 2 {
		t.Errorf("gifs=true: %d GIF routes, want 2", n)
	}
	if e := klipyEnv(t, on); len(e) != 1 || !e["query"] {
		t.Errorf("gifs=true: KLIPY_SECRET_ARN on %v, want query only", e)
	}
	// Which roles may read it: the policies naming the secret.
	readers := 0
	for id, r := range on.ofType("AWS::IAM::Policy") {
		b, _ := json.Marshal(r.Properties)
		if strings.Contains(string(b), `"Ref":"`+secretID+`"`) && strings.Contains(string(b), "secretsmanager:GetSecretValue") {
			readers++
			if roles, _ := json.Marshal(r.Properties["Roles"]); !strings.Contains(string(roles), "query") {
				t.Errorf("policy %s grants the KLIPY secret to %s", id, roles)
			}
		}
	}
	if readers != 1 {
		t.Errorf("%d policies read the KLIPY secret, want query's", readers)
	}
}
