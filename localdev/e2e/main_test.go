package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	if os.Getenv("BUZZ_LAMBDA") != emulator.ProcessesMode {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "buzz-e2e-functions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var names []string
	for _, f := range lambdas.Deployed(true) {
		names = append(names, f.Name)
	}
	if err := emulator.BuildFunctions(ctx, filepath.Join(dir, "bin"), names...); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	endpoint, stop, err := testkit.RunKMS(ctx, filepath.Join(dir, "kms"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: local-kms:", err)
		return 1
	}
	defer stop()
	// The tests' own handle (Relay.App) opens the relay key there too.
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_REGION": testkit.KMSRegion, "AWS_ENDPOINT_URL_KMS": endpoint,
	} {
		os.Setenv(k, v)
	}
	binaries = &Binaries{Dir: filepath.Join(dir, "bin"), KMSEndpoint: endpoint, KMSKeyARN: testkit.KMSKeyARN, Region: testkit.KMSRegion}
	fmt.Fprintf(os.Stderr, "e2e: BUZZ_LAMBDA=processes: every route runs its function's binary from %s\n", binaries.Dir)
	return m.Run()
}
