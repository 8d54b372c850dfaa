package apigw

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/buzzrelay/relay/shared/transport/wsrelay"
)

// With BUZZ_PUBLIC_URL every request is taken as addressed to the public
// host, so NIP-98 `u`, the NIP-42 relay tag and the community match it.
func TestPublicOrigin(t *testing.T) {
	pub := Origin{Scheme: "https", Host: "relay.example.com"}
	ev := events.APIGatewayV2HTTPRequest{RawPath: "/query", RawQueryString: "deep=1",
		QueryStringParameters: map[string]string{"deep": "1"},
		Headers:               map[string]string{"host": "abc.execute-api.eu-west-2.amazonaws.com", "x-forwarded-proto": "http"}}
	r, err := HTTPRequest(ev, pub)
	if err != nil || r.Scheme != "https" || r.Host != "relay.example.com" || r.Query["deep"] != "1" {
		t.Fatalf("http: %+v %v", r, err)
	}
	r, _ = HTTPRequest(ev, Origin{Scheme: "https"})
	if r.Scheme != "http" || r.Host != "abc.execute-api.eu-west-2.amazonaws.com" {
		t.Fatalf("http without public URL: %+v", r)
	}
	wev := events.APIGatewayWebsocketProxyRequest{RequestContext: events.APIGatewayWebsocketProxyRequestContext{
		ConnectionID: "c1", DomainName: "xyz.execute-api.eu-west-2.amazonaws.com", Stage: "prod"}}
	w, err := WebSocketRequest(wev, pub)
	if err != nil || w.Scheme != "wss" || w.Host != "relay.example.com" {
		t.Fatalf("websocket: %+v %v", w, err)
	}
	// The stage path reaches the WebSocket API through the public host too.
	if got := wsrelay.RelayURLs(w.Scheme, w.Host, w.Stage); len(got) != 2 || got[0] != "wss://relay.example.com" || got[1] != "wss://relay.example.com/prod" {
		t.Fatalf("relay URLs %v", got)
	}
	w, _ = WebSocketRequest(wev, Origin{Scheme: "http"})
	if w.Scheme != "ws" || w.Host != "xyz.execute-api.eu-west-2.amazonaws.com" || w.Stage != "prod" {
		t.Fatalf("websocket without public URL: %+v", w)
	}
}

// $connect touches nothing (the relay here has no registry at all) and a
// refused one answers 503, never 500.
func TestConnect(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h := WebSocket(wsrelay.New(nil, nil, nil, nil, log), Origin{Scheme: "https"})
	ok, err := h(context.Background(), events.APIGatewayWebsocketProxyRequest{RequestContext: events.APIGatewayWebsocketProxyRequestContext{
		ConnectionID: "c1", DomainName: "relay.example.com", EventType: "CONNECT"}})
	if err != nil || ok.StatusCode != 200 {
		t.Fatalf("connect: %d %v", ok.StatusCode, err)
	}
	bad, err := h(context.Background(), events.APIGatewayWebsocketProxyRequest{RequestContext: events.APIGatewayWebsocketProxyRequestContext{
		ConnectionID: "c2", EventType: "CONNECT"}})
	if err != nil || bad.StatusCode != 503 {
		t.Fatalf("connect without host: %d %v, want 503", bad.StatusCode, err)
	}
}

// With several hostnames behind CloudFront the addressed host arrives in
// BUZZ_HOST_HEADER on HTTP and $connect, and in the authorizer context on
// every later WebSocket event (which carries no headers).
func TestForwardedHostAndAuthorizerContext(t *testing.T) {
	o := Origin{Scheme: "https", HostHeader: "x-buzz-host"}
	hreq, err := HTTPRequest(events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"host": "abc.execute-api.us-east-1.amazonaws.com", "X-Buzz-Host": "bees.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/"}},
	}, o)
	if err != nil || hreq.Host != "bees.example.com" || hreq.Scheme != "https" {
		t.Fatalf("HTTP: %+v %v", hreq, err)
	}
	auth, err := Authorize(o)(context.Background(), events.APIGatewayCustomAuthorizerRequestTypeRequest{
		MethodArn: "arn:aws:execute-api:us-east-1:1:abc/live/$connect",
		Headers:   map[string]string{"Host": "abc.execute-api.us-east-1.amazonaws.com", "x-buzz-host": "Bees.Example.com"},
	})
	if err != nil || auth.PolicyDocument.Statement[0].Effect != "Allow" || auth.Context[AuthorizerHostKey] != "bees.example.com" {
		t.Fatalf("authorizer: %+v %v", auth, err)
	}
	ev := events.APIGatewayWebsocketProxyRequest{RequestContext: events.APIGatewayWebsocketProxyRequestContext{
		ConnectionID: "c1", DomainName: "abc.execute-api.us-east-1.amazonaws.com", Stage: "live", EventType: "MESSAGE",
		Authorizer: map[string]interface{}{AuthorizerHostKey: "bees.example.com"},
	}}
	wreq, err := WebSocketRequest(ev, o)
	if err != nil || wreq.Host != "bees.example.com" || wreq.Scheme != "wss" {
		t.Fatalf("WebSocket $default: %+v %v", wreq, err)
	}
	ev.RequestContext.Authorizer = nil
	if wreq, _ = WebSocketRequest(ev, o); wreq.Host != "abc.execute-api.us-east-1.amazonaws.com" {
		t.Fatalf("without an authorizer context: %+v", wreq)
	}
}
