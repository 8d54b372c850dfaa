package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopAndReset runs localdev/pg.sh, localdev/stop.sh and the Makefile's
// stop, reset and test targets in a copy of the checkout's scripts (so the
// cluster is a fresh one of its own, on a free port): make stop stops the
// cluster and a service recorded by a pid file, make reset deletes the
// data, and make test stops a cluster it started, also when it fails, but
// not one that was running before.
func TestStopAndReset(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"Makefile", "localdev/pg.sh", "localdev/stop.sh"} {
		copyScript(t, filepath.Join("..", f), filepath.Join(dir, f))
	}
	env := scriptEnv(t)
	t.Cleanup(func() { _, _ = runScript(dir, env, "localdev/stop.sh") })

	startPG := func(wantStarted string) string {
		t.Helper()
		out, err := runScript(dir, env, "bash", "-c", `source localdev/pg.sh && echo "started=$BUZZ_PG_STARTED"`)
		if err != nil {
			t.Fatalf("pg.sh: %v\n%s", err, out)
		}
		if !strings.Contains(out, "started="+wantStarted) {
			t.Fatalf("pg.sh: want started=%s, got:\n%s", wantStarted, out)
		}
		return out
	}
	postmaster := func() int {
		t.Helper()
		out, err := runScript(dir, env, "localdev/stop.sh", "--running")
		if err != nil {
			return 0
		}
		var pid int
		if _, err := fmt.Sscanf(out, "Postgres pid %d", &pid); err != nil {
			t.Fatalf("stop.sh --running: %q: %v", out, err)
		}
		return pid
	}

	// make stop after a start: the cluster and a service with a pid file.
	startPG("1")
	pg := postmaster()
	if pg == 0 {
		t.Fatal("stop.sh --running sees no cluster after pg.sh started one")
	}
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill() })
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()
	pidFile := filepath.Join(dir, ".localdev", "s3", "server.pid")
	if err := os.MkdirAll(filepath.Dir(pidFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runScript(dir, env, "make", "--no-print-directory", "stop"); err != nil {
		t.Fatalf("make stop: %v\n%s", err, out)
	}
	if procAlive(pg) {
		t.Errorf("Postgres pid %d still runs after make stop", pg)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Error("the service of .localdev/s3/server.pid still runs after make stop")
	}
	if out, _ := runScript(dir, env, "make", "--no-print-directory", "stop"); !strings.Contains(out, "no local service") {
		t.Errorf("a second make stop says: %q", out)
	}

	// A pid file older than the process it names (the pid was reused) is
	// left alone.
	other := exec.Command("sleep", "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(other.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(pidFile, old, old); err != nil {
		t.Fatal(err)
	}
	if out, err := runScript(dir, env, "localdev/stop.sh"); err != nil || !strings.Contains(out, "left alone") {
		t.Errorf("stop.sh with a stale pid file: %v\n%s", err, out)
	}
	if !procAlive(other.Process.Pid) {
		t.Error("stop.sh stopped a process its stale pid file did not start")
	}

	// make test stops a cluster it started, also on failure; the recipe's
	// $(MAKE) is replaced by a script that starts the cluster and fails.
	fake := filepath.Join(dir, "fakemake")
	if err := os.WriteFile(fake, []byte("#!/usr/bin/env bash\nsource localdev/pg.sh || exit 1\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runScript(dir, env, "make", "--no-print-directory", "test", "MAKE="+fake); err == nil {
		t.Fatalf("make test with a failing test passed:\n%s", out)
	}
	if pid := postmaster(); pid != 0 {
		t.Errorf("make test left the cluster it started running (pid %d)", pid)
	}
	// ...and leaves one that was running before.
	startPG("1")
	pg = postmaster()
	if out, err := runScript(dir, env, "make", "--no-print-directory", "test", "MAKE="+fake); err == nil {
		t.Fatalf("make test with a failing test passed:\n%s", out)
	}
	if !procAlive(pg) {
		t.Errorf("make test stopped a cluster that was running before it (pid %d)", pg)
	}
	startPG("0")

	// make reset: stops, says what it deletes, deletes every cluster's data.
	clusters, err := os.ReadFile(filepath.Join(dir, ".localdev", "pg-clusters"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runScript(dir, env, "make", "--no-print-directory", "reset")
	if err != nil {
		t.Fatalf("make reset: %v\n%s", err, out)
	}
	if !strings.Contains(out, "reset: deleting") {
		t.Errorf("make reset does not say what it deletes:\n%s", out)
	}
	if procAlive(pg) {
		t.Errorf("Postgres pid %d still runs after make reset", pg)
	}
	for _, d := range append(strings.Fields(string(clusters)), filepath.Join(dir, ".localdev")) {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after make reset (%v)", d, err)
		}
	}
	// A fresh start after the reset works.
	startPG("1")
	if out, err := runScript(dir, env, "make", "--no-print-directory", "reset"); err != nil {
		t.Fatalf("make reset: %v\n%s", err, out)
	}
}

func copyScript(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// scriptEnv is the environment without a DATABASE_URL (so pg.sh runs a
// cluster) and with a free port for it.
func scriptEnv(t *testing.T) []string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DATABASE_URL", "BUZZ_PGDATA", "BUZZ_PG_PORT", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "BUZZ_PG_PORT="+strconv.Itoa(port))
}

func runScript(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// procAlive: the process runs and is not a zombie waiting to be reaped.
func procAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
