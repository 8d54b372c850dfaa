package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// pgTool is a PostgreSQL client program (pg_dump, pg_restore): on PATH,
// or in Debian's /usr/lib/postgresql/<version>/bin (newest first), where
// localdev/pg.sh finds the server.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Sort(sort.Reverse(sort.StringSlice(found)))
	if len(found) == 0 {
		t.Fatalf("%s not found (Debian: the postgresql-client package, which localdev/pg.sh's postgresql brings)", name)
	}
	return found[0]
}

// The backup runbook's steps (docs/deploy.md, "Backups and restore") on
// the local cluster: dump the relay's database, restore it into a new
// database, start a relay on the copy, and it serves the same data: the
// channel's window and the counts equal the original's.
func TestRestoreIntoANewDatabaseServesTheSameData(t *testing.T) {
	r := newRelay(t)
	a := onHost(t, r, "127.0.0.1")
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	ch := createChannelID()
	a.accept(alice, signed(t, alice, 9007, nostr.Tags{{"h", ch}, {"name", "backup"}, {"visibility", "open"}}, ""))
	for i := 0; i < 12; i++ {
		a.accept(alice, signed(t, alice, 9, nostr.Tags{{"h", ch}}, "message "+string(rune('a'+i))))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dump := filepath.Join(t.TempDir(), "relay.dump")
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.CommandContext(ctx, pgTool(t, name), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("pg_dump", "--format=custom", "--no-owner", "--file="+dump, "--dbname="+r.DSN)
	admin := testkit.AdminDSN(t)
	name := "restored_" + strings.ReplaceAll(createChannelID(), "-", "")[:8]
	dsn, err := dbtest.CreateDatabase(ctx, admin, name, "template0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dbtest.DropDatabase(context.Background(), admin, name) })
	run("pg_restore", "--no-owner", "--exit-on-error", "--dbname="+dsn, dump)
	if fi, err := os.Stat(dump); err != nil || fi.Size() == 0 {
		t.Fatalf("dump %v %v", fi, err)
	}

	restored := onHost(t, newRelayAt(t, dsn, Options{}), "127.0.0.1")
	window := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": 10}
	ids := func(h *hosted) []string {
		var out []string
		for _, ev := range h.events(bob, window) {
			out = append(out, ev.ID)
		}
		return out
	}
	before, after := ids(a), ids(restored)
	if len(before) != 10 || strings.Join(before, " ") != strings.Join(after, " ") {
		t.Fatalf("the channel window: original %v, restored %v", before, after)
	}
	for _, f := range []map[string]any{{"kinds": []int{9}, "#h": []string{ch}}, {"authors": []string{alice.Pub}}} {
		if n, m := a.count(bob, f), restored.count(bob, f); n != m || n == 0 {
			t.Fatalf("count %v: original %d, restored %d", f, n, m)
		}
	}
	// The restored relay takes writes on its own.
	restored.accept(alice, signed(t, alice, 9, nostr.Tags{{"h", ch}}, "after the restore"))
}
