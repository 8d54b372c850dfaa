package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

func testEnv(t *testing.T) map[string]string {
	return map[string]string{
		"DATABASE_URL":           testkit.NewDatabase(t),
		"RELAY_SECRET_KEY":       nostr.GeneratePrivateKey(),
		"RELAY_SEAL_KEY":         nostr.GeneratePrivateKey(),
		"WS_MANAGEMENT_ENDPOINT": "http://127.0.0.1:9", // nothing listens: no post is made here
		"BUZZ_PUBLIC_SCHEME":     "http",
		"SESSION_TABLE":          sessionstest.DynamoDB(t).Table, // a fresh table of the local DynamoDB
	}
}

// Each function kind builds what its handler uses and nothing more: the
// query function has no write path, ws-connect no database, ws-disconnect
// and fanout no relay key.
func TestEachKindBuildsOnlyWhatItUses(t *testing.T) {
	env := testEnv(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	for _, c := range []struct {
		name                                string
		parts                               Parts
		noEndpoint                          bool
		store, keys, ingest, reader, fanout bool
	}{
		{"ingest", IngestParts, false, true, true, true, true, true},
		{"ingest without WS_MANAGEMENT_ENDPOINT", IngestParts, true, true, true, true, false, false},
		{"query", QueryParts, false, true, true, false, true, false},
		{"ws-connect", ConnectParts, false, false, false, false, false, false},
		{"ws-message", MessageParts, false, true, true, true, true, true},
		{"ws-disconnect", DisconnectParts, false, true, false, false, false, false},
		{"fanout", FanoutParts, false, true, false, false, true, true},
		{"localdev", localParts, false, true, true, true, true, true},
	} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		if c.noEndpoint {
			delete(e, "WS_MANAGEMENT_ENDPOINT")
		}
		cfg, err := config.Load(func(k string) string { return e[k] })
		if err != nil {
			t.Fatal(err)
		}
		a, err := build(ctx, cfg, quiet, c.parts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := [5]bool{a.Store != nil, a.Keys != nil, a.Ingest != nil, a.Reader != nil, a.Fanout != nil}
		if want := [5]bool{c.store, c.keys, c.ingest, c.reader, c.fanout}; got != want {
			t.Errorf("%s: built store, keys, ingest, reader, fanout = %v, want %v", c.name, got, want)
		}
		if a.Store != nil {
			a.Store.Close()
		}
	}
}

// handlerOf is what a main does: Build, then the handler of its routes.
func handlerOf[H any](ctx context.Context, log *slog.Logger, parts Parts, handler func(*App) H) (H, error) {
	a, err := Build(ctx, log, parts)
	if err != nil {
		var none H
		return none, err
	}
	return handler(a), nil
}

// What each main builds from the environment answers with the routes of
// its function only.
func TestFunctionConstructors(t *testing.T) {
	for k, v := range testEnv(t) {
		t.Setenv(k, v)
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	post := func(path string) events.APIGatewayV2HTTPRequest {
		return events.APIGatewayV2HTTPRequest{RawPath: path, Headers: map[string]string{"host": "127.0.0.1"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: path}}}
	}
	ingest, err := handlerOf(ctx, quiet, IngestParts, (*App).IngestHTTP)
	if err != nil {
		t.Fatal(err)
	}
	query, err := handlerOf(ctx, quiet, QueryParts, (*App).QueryHTTP)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
		path string
		want int
	}{
		{"ingest POST /events", ingest, "/events", http.StatusUnauthorized}, // served: no NIP-98 token
		{"ingest POST /query", ingest, "/query", http.StatusNotFound},
		{"query POST /query", query, "/query", http.StatusUnauthorized},
		{"query POST /events", query, "/events", http.StatusNotFound},
	} {
		if resp, err := c.h(ctx, post(c.path)); err != nil || resp.StatusCode != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, resp.StatusCode, err, c.want)
		}
	}
	ws := events.APIGatewayWebsocketProxyRequest{RequestContext: events.APIGatewayWebsocketProxyRequestContext{
		ConnectionID: "c1", DomainName: "127.0.0.1", EventType: "CONNECT"}}
	for name, parts := range map[string]Parts{
		"ws-connect": ConnectParts, "ws-message": MessageParts, "ws-disconnect": DisconnectParts,
	} {
		h, err := handlerOf(ctx, quiet, parts, (*App).WebSocket)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp, err := h(ctx, ws); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s $connect: %d %v", name, resp.StatusCode, err)
		}
	}
	if _, err := handlerOf(ctx, quiet, FanoutParts, (*App).FanoutBatch); err != nil {
		t.Fatal(err)
	}
	if _, err := handlerOf(ctx, quiet, AuthorizeParts, (*App).Authorizer); err != nil {
		t.Fatal(err)
	}
}
