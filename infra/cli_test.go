package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCLISynthOffline runs what `make synth` runs: the pinned aws-cdk CLI
// (npm ci in infra/) executing cdk.json's app, with no AWS access.
func TestCLISynthOffline(t *testing.T) {
	cli, err := filepath.Abs(filepath.Join("node_modules", ".bin", "cdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		// make test-infra installs the CLI first and sets BUZZ_REQUIRE_CDK=1,
		// so there this can only fail; a bare `go test` without it skips.
		if os.Getenv("CI") != "" || os.Getenv("BUZZ_REQUIRE_CDK") == "1" {
			t.Fatalf("aws-cdk CLI not installed (make test-infra runs npm ci): %v", err)
		}
		t.Skip("aws-cdk CLI not installed: run `make test-infra` (npm ci in infra/)")
	}
	out := filepath.Join(t.TempDir(), "cdk.out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "synth", "-q", "--no-notices", "-c", "assetDir="+assetDir(t), "-o", out)
	cmd.Env = append(os.Environ(),
		"CDK_DISABLE_CLI_TELEMETRY=true",
		"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20",
		// No credentials anywhere: synth must not need AWS.
		"AWS_CONFIG_FILE="+filepath.Join(t.TempDir(), "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(t.TempDir(), "none"),
		"AWS_EC2_METADATA_DISABLED=true",
	)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cdk synth: %v\n%s", err, b)
	}
	t.Logf("cdk synth took %s", time.Since(start).Round(100*time.Millisecond))
	b, err := os.ReadFile(filepath.Join(out, "BuzzRelay-default.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]any `json:"Parameters"`
		Resources  map[string]any `json:"Resources"`
		Outputs    map[string]any `json:"Outputs"`
	}
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"DbMinCapacity", "DbMaxCapacity"} {
		if tpl.Parameters[p] == nil {
			t.Errorf("parameter %s missing", p)
		}
	}
	for _, o := range []string{"HttpUrl", "WebSocketUrl", "RelayKeyKmsKeyArn", "RelayPubkey"} {
		if tpl.Outputs[o] == nil {
			t.Errorf("output %s missing", o)
		}
	}
	if len(tpl.Resources) < 50 {
		t.Errorf("only %d resources", len(tpl.Resources))
	}
}
