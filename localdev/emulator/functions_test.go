package emulator

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The Makefile's FUNCTIONS, the folders under functions/, the CDK app's
// functions (infra.Functions is lambdas.Functions) and the routes of
// BUZZ_LAMBDA=processes name the same functions; every function is on a
// route or in lambdas.OffRoute, never both; make build uses the flags this
// mode builds with.
func TestFunctionsAgree(t *testing.T) {
	root := filepath.Join("..", "..")
	all := lambdas.Names()

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FUNCTIONS\s*:=\s*(.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("Makefile: no FUNCTIONS := line")
	}
	mk := strings.Fields(string(m[1]))
	sort.Strings(mk)
	if !slices.Equal(mk, all) {
		t.Errorf("the Makefile's FUNCTIONS %v differ from shared/wiring/lambdas.Functions %v", mk, all)
	}
	flags := strings.Join(lambdas.BuildFlags[:len(lambdas.BuildFlags)-1], " ") + " -ldflags='" +
		strings.TrimPrefix(lambdas.BuildFlags[len(lambdas.BuildFlags)-1], "-ldflags=") + "'"
	if !strings.Contains(string(makefile), "CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build "+flags+" ") {
		t.Errorf("make build does not build with lambdas.BuildFlags (%s), which BUZZ_LAMBDA=processes builds with", flags)
	}

	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	if !slices.Equal(dirs, all) {
		t.Errorf("functions/ holds %v, shared/wiring/lambdas.Functions %v", dirs, all)
	}

	routed := routed(true)
	for _, name := range all {
		_, off := lambdas.OffRoute[name]
		on := slices.Contains(routed, name)
		switch {
		case on && off:
			t.Errorf("%s is on a route and in lambdas.OffRoute", name)
		case !on && !off:
			t.Errorf("%s is on no route: route it in shared/wiring/lambdas or list it in lambdas.OffRoute", name)
		}
	}
	for name := range lambdas.OffRoute {
		if _, ok := lambdas.ByName(name); !ok {
			t.Errorf("lambdas.OffRoute names %s, which is no function", name)
		}
	}

	// The routes of BUZZ_LAMBDA=processes, with media and the authorizer
	// (the local settings'): each reaches the function lambdas names.
	p := &ProcessStack{procs: map[string]*Processes{}}
	for _, f := range lambdas.Deployed(true) {
		if !f.Migrate {
			p.procs[f.Name] = &Processes{name: f.Name}
		}
	}
	st := p.routes(true, nil)
	want := map[string]string{}
	for _, r := range append(append([]lambdas.HTTPRoute(nil), lambdas.HTTPRoutes...), lambdas.MediaRoutes...) {
		want[r.Key()] = r.Function
		if st.HTTP.Routes[r.Key()] == nil {
			t.Errorf("processes mode: no handler for %s", r.Key())
		}
	}
	for route, fn := range lambdas.WebSocketRoutes {
		want[route] = fn
	}
	for _, f := range lambdas.Functions {
		switch {
		case f.Authorizer:
			want[AuthorizerRoute] = f.Name
		case f.Fanout, f.Pushes, f.Sweeps, f.SendsPush, f.RunsWorkflows, f.Dials:
			want[InvokeRoute+f.Name] = f.Name
		}
	}
	for k, fn := range want {
		if p.Reaches[k] != fn {
			t.Errorf("processes mode: %s reaches %q, want %s", k, p.Reaches[k], fn)
		}
	}
	for k := range p.Reaches {
		if _, ok := want[k]; !ok {
			t.Errorf("processes mode has route %s, which shared/wiring/lambdas does not", k)
		}
	}
	if len(st.HTTP.Routes) != len(lambdas.HTTPRoutes)+len(lambdas.MediaRoutes) {
		t.Errorf("processes mode serves %d HTTP routes, lambdas has %d", len(st.HTTP.Routes), len(lambdas.HTTPRoutes)+len(lambdas.MediaRoutes))
	}
	if st.Lambda.Calls[PushDialerFunction] == nil || st.Lambda.Functions[PushDialerFunction] != nil {
		t.Error("processes mode: the push dialer is not invoked synchronously (Calls) only")
	}
	if st.WS.Connect == nil || st.WS.Default == nil || st.WS.Disconnect == nil || st.WS.Authorizer == nil {
		t.Error("processes mode: a WebSocket route or the authorizer has no handler")
	}
}

// The cold-start lines (app.ColdStart) say which binary each function's
// process started from; CheckColdStarts accepts only a function's own
// binary in BinDir, built from its own functions/ folder.
func TestCheckColdStarts(t *testing.T) {
	// ingest and query run; media, on demand, has not been invoked yet.
	p := &ProcessStack{BinDir: "/bin/fns", procs: map[string]*Processes{"ingest": {started: 1}, "query": {started: 1}, "media": {opts: ProcessOptions{OnDemand: true}}}}
	tap := &coldStartTap{next: io.Discard, seen: p.sawColdStart}
	line := func(fn, exe, main string) {
		fmt.Fprintf(tap, `{"level":"INFO","msg":%q,"function":%q,"executable":%q,"main":%q}`+"\n", app.ColdStartMessage, fn, exe, main)
	}
	line("migrate", "/bin/fns/migrate", "github.com/buzzrelay/relay/functions/migrate")
	line("ingest", "/bin/fns/ingest", "github.com/buzzrelay/relay/functions/ingest")
	line("query", "/bin/fns/ingest", "github.com/buzzrelay/relay/functions/ingest") // another function's binary
	err := p.CheckColdStarts()
	if err == nil || !strings.Contains(err.Error(), "query") || strings.Contains(err.Error(), "ingest,") {
		t.Fatalf("query started from ingest's binary: %v", err)
	}
	line("query", "/bin/fns/query", "github.com/buzzrelay/relay/functions/query")
	if err := p.CheckColdStarts(); err != nil {
		t.Fatal(err)
	}
}

// A function started on demand runs no process until its first
// invocation, then one more each time every running one is busy, at most
// Count.
func TestProcessesOnDemand(t *testing.T) {
	// true(1) exits at once and keep starts it again, which is all
	// grow needs to count.
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) on PATH")
	}
	p, err := StartProcesses(context.Background(), "ondemand", ProcessOptions{Binary: bin, Count: 2, OnDemand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := p.Started(); n != 0 {
		t.Fatalf("started %d processes before any invocation, want 0", n)
	}
	for want := 1; want <= 3; want++ {
		p.grow()
		if n := p.Started(); n != min(want, 2) {
			t.Fatalf("after %d grows: %d started, want %d", want, n, min(want, 2))
		}
	}
}

// routed is every function some route reaches (the authorizer included),
// sorted; with media, the media routes count too.
func routed(media bool) []string {
	set := map[string]bool{}
	routes := lambdas.HTTPRoutes
	if media {
		routes = append(append([]lambdas.HTTPRoute(nil), lambdas.HTTPRoutes...), lambdas.MediaRoutes...)
	}
	for _, r := range routes {
		set[r.Function] = true
	}
	for _, fn := range lambdas.WebSocketRoutes {
		set[fn] = true
	}
	for _, f := range lambdas.Functions {
		if f.Authorizer {
			set[f.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
