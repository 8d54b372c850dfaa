package awssdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
)

// The emulator's endpoint gets dummy credentials and a default region; any
// other client takes its region from the environment or fails at start.
func TestLoad(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	ctx := context.Background()
	cfg, err := awssdk.Load(ctx, "", "http://127.0.0.1:8080")
	if err != nil || cfg.Region != awssdk.LocalRegion {
		t.Fatalf("emulator: %q %v", cfg.Region, err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "localdev" {
		t.Fatalf("emulator credentials: %+v %v", creds, err)
	}
	if cfg, err = awssdk.Load(ctx, "eu-west-2", "http://localhost:8080"); err != nil || cfg.Region != "eu-west-2" {
		t.Fatalf("emulator with a region: %q %v", cfg.Region, err)
	}
	if _, err := awssdk.Load(ctx, "", "https://abc.execute-api.eu-west-2.amazonaws.com/prod"); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Fatalf("no region: %v", err)
	}
	t.Setenv("AWS_REGION", "ap-south-1")
	if cfg, err = awssdk.Load(ctx, "", ""); err != nil || cfg.Region != "ap-south-1" {
		t.Fatalf("AWS_REGION: %q %v", cfg.Region, err)
	}
}
