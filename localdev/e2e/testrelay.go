package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// StartTest starts a harness relay over a fresh migrated database
// (testkit.NewDatabase), closed when the test ends. Without o.Log the
// handlers' errors go to stderr.
func StartTest(t testing.TB, o Options) *Relay {
	t.Helper()
	dsn := testkit.NewDatabase(t)
	start := 30 * time.Second
	if o.FanoutProcesses > 0 || o.PushSenderProcesses > 0 {
		// The fan-out function's binary is built first (`go build`, a
		// minute or more with a cold cache on a busy 2-core machine).
		start = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), start)
	defer cancel()
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	r, err := Start(ctx, dsn, suiteOptions(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// NodePackages is the prologue of every test that runs a real JavaScript
// client: node's path, and dir (relative to the test's folder) made absolute
// with its pinned packages installed (NPMCI). Without node on PATH the test
// is skipped, naming what (the client it would have run);
// BUZZ_REQUIRE_INTEROP=1 (set by .ci/run) makes that a failure.
func NodePackages(t testing.TB, dir, what string, pins map[string]string) (node, abs string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("BUZZ_REQUIRE_INTEROP") == "1" {
			t.Fatal("node is not on PATH")
		}
		t.Skip("node is not on PATH; install Node 20 to run the " + what)
	}
	abs, err = filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	NPMCI(t, abs, pins)
	return node, abs
}

// RunNode runs script with node in dir (its args after it) within timeout
// and decodes the last line it prints, a JSON object, into out; a failed run
// or an unreadable last line fails the test with both outputs. It returns
// what the script wrote to stderr.
func RunNode(t testing.TB, node, dir string, timeout time.Duration, out any, script string, args ...string) (stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stdout, errout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errout
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), errout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("node %s output %q: %v (stderr %s)", script, stdout.String(), err, errout.String())
	}
	return errout.String()
}

// NPMCI installs a folder's locked npm packages (npm ci) unless each of
// pins (package name to version) is installed already.
func NPMCI(t testing.TB, dir string, pins map[string]string) {
	t.Helper()
	ok := true
	for pkg, version := range pins {
		ok = ok && installedVersion(dir, pkg) == version
	}
	if ok {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("node is installed but npm is not; it is needed to install the pinned packages")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

// installedVersion is the version of pkg installed under dir, "" if none.
func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}
