package routes

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/testing/mdtable"
)

// TestBuzzDesktopSurfaceIsTrue holds docs/buzz-desktop.md to what this
// relay serves: an app route marked yes or partly is a row of Table, one
// marked no is not; a kind marked yes or partly has an accepting row of the
// kinds table, one marked no has none; every route of Table (but CORS
// preflights) is in the app's table or among the routes it does not call.
func TestBuzzDesktopSurfaceIsTrue(t *testing.T) {
	const doc = "../../../docs/buzz-desktop.md"
	header, rows, err := mdtable.Read(doc, "## The app's relay surface")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header, []string{"surface", "served", "why"}) {
		t.Fatalf("header %v", header)
	}
	served := map[string]bool{}
	for _, r := range Table {
		for _, m := range r.Methods {
			if m != options {
				served[m+" "+r.Path] = true
			}
		}
	}
	listed := map[string]bool{}
	for _, row := range rows {
		surface, state := strings.Trim(row[0], "`"), row[1]
		if state != "yes" && state != "partly" && state != "no" {
			t.Errorf("%s: served %q, want yes, partly or no", surface, state)
		}
		if strings.TrimSpace(row[2]) == "" {
			t.Errorf("%s: no why", surface)
		}
		on := state != "no"
		if n, ok := strings.CutPrefix(surface, "kind "); ok {
			k, err := strconv.Atoi(n)
			if err != nil {
				t.Errorf("%s: not a kind", surface)
				continue
			}
			_, own := kinds.Lookup(k)
			accepted := own && (kinds.Accepted(k) || k == kinds.Auth) // AUTH is accepted in its own message
			if on != accepted {
				t.Errorf("%s is marked %s, but the kinds table accepts it: %v", surface, state, accepted)
			}
			continue
		}
		if listed[surface] {
			t.Errorf("%s is listed twice", surface)
		}
		listed[surface] = true
		if strings.HasPrefix(surface, "WS ") {
			continue // the WebSocket API, not the HTTP route table
		}
		if on != served[surface] {
			t.Errorf("%s is marked %s, but the route table serves it: %v", surface, state, served[surface])
		}
	}
	_, others, err := mdtable.Read(doc, "## Served routes the app does not call")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range others {
		route := strings.Trim(row[0], "`")
		if !served[route] {
			t.Errorf("%s is listed as served, but the route table does not serve it", route)
		}
		listed[route] = true
	}
	for route := range served {
		if !listed[route] {
			t.Errorf("the route table serves %s, which docs/buzz-desktop.md does not list", route)
		}
	}
}
