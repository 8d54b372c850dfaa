package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Must show: the egress check passes against the emulator's @connections
// endpoint (where make dev's handlers post, WS_MANAGEMENT_ENDPOINT) and
// fails with its message once that endpoint is unreachable.
func TestAgainstTheEmulator(t *testing.T) {
	// Not StartTest: this test closes the relay itself, once.
	ctx := context.Background()
	r, err := e2e.Start(ctx, testkit.NewDatabase(t), e2e.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	check := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb)
		return code, out.String(), errb.String()
	}
	// make dev's default: http://$BUZZ_ADDR.
	t.Setenv("BUZZ_ADDR", strings.TrimPrefix(r.HTTPURL, "http://"))
	if code, out, errs := check(); code != 0 || !strings.Contains(out, "ok    WebSocket @connections (make dev)") || !strings.Contains(out, "1/1 endpoints reachable") {
		t.Fatalf("make dev's @connections: exit %d\n%s%s", code, out, errs)
	}
	// The stack output's form (cdk deploy --outputs-file).
	eps, _ := json.Marshal([]map[string]string{{"Name": "WebSocket @connections", "Url": r.HTTPURL, "Network": "tcp"}})
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	b, _ := json.Marshal(map[string]map[string]string{"BuzzRelay-default": {OutputName: string(eps), "HttpUrl": r.HTTPURL}})
	if err := os.WriteFile(outputs, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := check("-outputs", outputs); code != 0 {
		t.Fatalf("-outputs: exit %d\n%s%s", code, out, errs)
	}

	// Unreachable: the emulator is gone, its port closed.
	r.Close()
	closed = true
	code, out, errs := check("-outputs", outputs)
	if code != 1 || !strings.Contains(out, "FAIL  WebSocket @connections") {
		t.Fatalf("unreachable: exit %d\n%s%s", code, out, errs)
	}
	host := strings.TrimPrefix(r.HTTPURL, "http://")
	for _, want := range []string{"egress check: WebSocket @connections at " + host + " is unreachable", "(connect:", "-c egress=nat-instance"} {
		if !strings.Contains(errs, want) {
			t.Errorf("message %q lacks %q", errs, want)
		}
	}
}

func TestUsage(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	os.WriteFile(outputs, []byte(`{"A":{"HttpUrl":"x"},"B":{}}`), 0o600)
	for name, args := range map[string][]string{
		"endpoint without url": {"-endpoint", "KMS"},
		"both":                 {"-endpoint", "KMS=https://kms.example.com", "-outputs", outputs},
		"which stack":          {"-outputs", outputs},
		"no output":            {"-outputs", outputs, "-stack", "A"},
		"no file":              {"-outputs", outputs + ".missing"},
		"bad flag":             {"-nope"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%s: exit %d, stderr %q", name, code, errb.String())
		}
	}
}
