package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The store is the only door to PostgreSQL: no other package of the module
// imports pgx (or pgconn, pgxpool, ...) in its non-test code. Two more
// packages under shared/postgres/ may: migrate, because tern needs a pgx
// connection of its own (the rows it writes go through store), and dbtest,
// what only tests, the seed command and the benchmarks do (whole databases,
// bulk loads, a direct look at a table), which no function binary links
// (TestFunctionsLinkNoTestCode). Test files may import pgx too.
var door = map[string]bool{
	"github.com/buzzrelay/relay/shared/postgres/store":   true,
	"github.com/buzzrelay/relay/shared/postgres/migrate": true,
	"github.com/buzzrelay/relay/shared/postgres/dbtest":  true,
}

// testOnly are the packages no Lambda binary may link: the test kits and
// the test-database package.
var testOnly = []string{
	"github.com/buzzrelay/relay/shared/testing",
	"github.com/buzzrelay/relay/shared/postgres/dbtest",
}

// TestFunctionsLinkNoTestCode: no function binary (functions/*) links the
// test kits or the test-database code (cloning databases, bulk loads).
func TestFunctionsLinkNoTestCode(t *testing.T) {
	deps := strings.Fields(string(goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./functions/...")))
	if !slices.Contains(deps, "github.com/buzzrelay/relay/shared/postgres/store") ||
		!slices.Contains(deps, "github.com/buzzrelay/relay/functions/ingest") {
		t.Fatalf("go list -deps ./functions/... lists %d packages, without the store or functions/ingest: the test is not looking at the binaries", len(deps))
	}
	for _, d := range deps {
		for _, p := range testOnly {
			if d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("a function binary links %s: test-only code (it would ship in every Lambda zip)", d)
			}
		}
	}
}

const pgxModule = "github.com/jackc/pgx/v5"

func TestOnlyStoreImportsPgx(t *testing.T) {
	out := goList(t, "-json=ImportPath,Imports", "./...")
	seen := 0
	var wrong []string
	importing := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		seen++
		for _, imp := range p.Imports {
			if imp != pgxModule && !strings.HasPrefix(imp, pgxModule+"/") {
				continue
			}
			importing[p.ImportPath] = true
			if !door[p.ImportPath] {
				wrong = append(wrong, p.ImportPath+" imports "+imp)
			}
		}
	}
	if seen < 20 || !importing["github.com/buzzrelay/relay/shared/postgres/store"] {
		t.Fatalf("go list saw %d packages, store among the pgx importers: %v; the test is not looking at the module", seen, importing["github.com/buzzrelay/relay/shared/postgres/store"])
	}
	sort.Strings(wrong)
	for _, w := range wrong {
		t.Errorf("%s: only shared/postgres/store talks to PostgreSQL; add the statement there", w)
	}
}

// goList runs go list with args at the module's root and returns its
// output.
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	return out
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		t.Fatal("not inside the module")
	}
	return filepath.Dir(mod)
}

const storePkg = "github.com/buzzrelay/relay/shared/postgres/store"

// storeUsers are the layers whose non-test code may import the store: the
// store's own layer, the use cases that run its statements, the wiring that
// opens it, the test kits and the local commands. A transport, the domain,
// an AWS adapter or a function speaks the domain's nouns
// (shared/domain/records, shared/domain/session) and never the store's.
var storeUsers = []string{
	"github.com/buzzrelay/relay/shared/postgres/",
	"github.com/buzzrelay/relay/shared/service/",
	"github.com/buzzrelay/relay/shared/wiring/",
	"github.com/buzzrelay/relay/shared/testing/",
	"github.com/buzzrelay/relay/localdev/",
}

// storeUntilRouted are the transports that still import the store: none
// since the route table (NIP-86 a use case under shared/service/manage,
// the deep health check over bridge.Database). The list only shrinks: a
// package on it that no longer imports the store fails too.
var storeUntilRouted = map[string]bool{}

// TestTransportsSpeakTheDomainNotTheStore: no package outside storeUsers
// imports the store in its non-test code, so the rows the transports
// encode and the errors they map are the domain's types.
func TestTransportsSpeakTheDomainNotTheStore(t *testing.T) {
	out := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	importers := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && slices.Contains(f[1:], storePkg) {
			importers[f[0]] = true
		}
	}
	if !importers["github.com/buzzrelay/relay/shared/service/ingest"] {
		t.Fatalf("go list names %d importers of the store, not shared/service/ingest: the test is not looking at the module", len(importers))
	}
	for p := range importers {
		if storeUntilRouted[p] || slices.ContainsFunc(storeUsers, func(u string) bool { return strings.HasPrefix(p, u) }) {
			continue
		}
		t.Errorf("%s imports %s: take the nouns from shared/domain (records, session) and the statements through a use case under shared/service", p, storePkg)
	}
	for p := range storeUntilRouted {
		if !importers[p] {
			t.Errorf("%s no longer imports the store: take it off storeUntilRouted", p)
		}
	}
}
