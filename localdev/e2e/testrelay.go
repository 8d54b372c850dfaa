package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// StartTest starts a harness relay over a fresh migrated database
// (testkit.NewDatabase), closed when the test ends. Without o.Log the
// handlers' errors go to stderr.
func StartTest(t testing.TB, o Options) *Relay {
	t.Helper()
	parallel(t)
	dsn := testkit.NewDatabase(t)
	start := 30 * time.Second
	if o.FanoutProcesses > 0 || o.PushSenderProcesses > 0 || o.WorkflowRunnerProcesses > 0 {
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
	if r.Functions != nil {
		// Before Close (cleanups run last first): every function the
		// test started on demand logged its cold start from its own binary.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := r.Functions.WaitColdStarts(ctx, 10*time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	return r
}

// serialTests run alone even under BUZZ_E2E_PARALLEL=1: their assertions
// are about time or load on the whole machine (a healthy subscriber's
// delay beside slow ones, a flood that must not stall another key's
// write, 200 joins at once, a browser).
var serialTests = map[string]bool{
	"TestPushFortySlowReceiversLoseNothingAndDelayNoOne":      true,
	"TestPushOneBusySenderInstanceServesWhatCommitsMeanwhile": true,
	"TestNewestREQFloodStoresOnlyWhatItAnswers":               true,
	"TestIdleREQFloodCannotStallAnotherKeysWrite":             true,
	"TestConcurrentJoinsAllAcceptedAt200":                     true,
	"TestOperatorConsoleInChromium":                           true,
	"TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements":         true,
	"TestNIP11PolledEveryMinuteMakesNoDatabaseStatement":      true,
	"TestSpaceSyncBurstsAreServed":                            true,
	"TestREQAnswersUnderAttack":                               true,
	"TestTenFilterREQEndsInEOSEOnALiveSocket":                 true,
}

var parallelMarked sync.Map // *testing.T → true once t.Parallel was called

// parallel runs t beside the other tests that start a relay when
// BUZZ_E2E_PARALLEL=1 (make test; go test's -parallel says how many at
// once): each has its own database, session table, S3 server, listener
// and functions, and most of a test's time is waiting on them, not the
// CPU. Only a top-level test (a subtest's parent would go on before it
// ends), once, and not one of serialTests; Go runs every test that stays
// serial before the parallel ones start.
func parallel(tb testing.TB) {
	t, ok := tb.(*testing.T)
	if !ok || os.Getenv("BUZZ_E2E_PARALLEL") != "1" || strings.Contains(t.Name(), "/") || serialTests[t.Name()] {
		return
	}
	if _, done := parallelMarked.LoadOrStore(t, true); done {
		return
	}
	t.Cleanup(func() { parallelMarked.Delete(t) })
	t.Parallel()
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
	// One install at a time per folder, across the tests of this suite
	// that run in parallel and the other suite's process (make test runs
	// both end-to-end suites at once): an npm ci half done has some pins
	// in place and other packages missing, and two at once remove each
	// other's files.
	unlock, err := lockFile(filepath.Join(dir, ".npm-ci.lock"))
	if err != nil {
		t.Fatalf("npm ci in %s: %v", dir, err)
	}
	defer unlock()
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

// lockFile takes an exclusive flock(2) on path (created if missing),
// waiting for another holder, and returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
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
