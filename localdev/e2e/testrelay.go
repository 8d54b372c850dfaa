package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	r, err := Start(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
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
