package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/service/gifs"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/transport/blossom"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/nip86"
	"github.com/buzzrelay/relay/shared/transport/routes"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// sides is the route table's side of each HTTP function.
var sides = map[string]routes.Side{"ingest": routes.Write, "query": routes.Read}

// TestDeployedRoutesAreTheRouteTable holds API Gateway's routes
// (lambdas.HTTPRoutes, MediaRoutes) to the one route table
// (shared/transport/routes): every deployed route reaches a row its
// function serves, and every row but a CORS preflight is deployed to a
// function that serves it, so no route is served that API Gateway cannot
// reach and none is deployed that the table does not serve.
func TestDeployedRoutesAreTheRouteTable(t *testing.T) {
	server := func(side routes.Side) *routes.Server {
		return &routes.Server{Bridge: &bridge.Bridge{Manager: &manage.Service{}, Invites: &invites.Service{}, GIFs: &gifs.Service{Key: "k"}}, Media: &blossom.Codec{}, Side: side}
	}
	// sample is a path a deployed pattern stands for.
	sample := func(p string) string {
		return strings.NewReplacer("{blob}", strings.Repeat("a", 64), "{pubkey}", strings.Repeat("b", 64), "{code}", "c0de", "{file}", "app.js", "{group}", "g1", "{id}", strings.Repeat("d", 32), "{sha256}", strings.Repeat("e", 64)).Replace(p)
	}
	deployed := map[string]bool{}
	for _, r := range append(append([]lambdas.HTTPRoute(nil), lambdas.HTTPRoutes...), lambdas.MediaRoutes...) {
		side, ok := sides[r.Function]
		if !ok {
			t.Errorf("%s reaches %s, which serves no HTTP route", r.Key(), r.Function)
			continue
		}
		req := bridge.Request{Method: r.Method, Path: sample(r.Path)}
		if r.Method == "POST" && r.Path == "/" {
			req.Headers = map[string]string{"content-type": nip86.ContentType}
		}
		row, _ := server(side).Match(req)
		if row.Path == "*" {
			t.Errorf("%s is deployed to %s, but the route table serves it there with no row", r.Key(), r.Function)
		}
		deployed[r.Method+" "+strings.TrimSuffix(row.Path, "...}")+" "+r.Function] = true
	}
	for _, row := range routes.Table {
		for _, m := range row.Methods {
			if m == "OPTIONS" {
				continue // a CORS preflight: API Gateway answers it before any function
			}
			if m == "HEAD" && slices.Contains(row.Methods, "GET") {
				m = "GET" // the console's HEAD beside its GET: the same row
			}
			found := false
			for fn, side := range sides {
				found = found || (row.Side&side != 0 && deployed[m+" "+strings.TrimSuffix(row.Path, "...}")+" "+fn])
			}
			if !found {
				t.Errorf("the route table serves %s %s, but no deployed route reaches a function that serves it", m, row.Path)
			}
		}
	}
}
