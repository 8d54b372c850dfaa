package emulator

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// Stack is the relay's API Gateway configuration in local form, the same
// route table as infra/ (shared/wiring/lambdas): POST /events to ingest;
// POST /query, POST /count, GET /, POST / (NIP-86) and GET /healthz to
// query; $connect, $default and $disconnect to the three WebSocket
// functions; the Lambda Invoke API for
// the fan-out function (FanoutFunction), which fo's asynchronous dispatch
// calls. Every handler is the one its Lambda starts.
type Stack struct {
	HTTP   *HTTPAPI
	WS     *WebSocketAPI
	Lambda *LambdaAPI
}

// FanoutFunction is the name the fan-out function has in localdev
// (FANOUT_FUNCTION; LAMBDA_ENDPOINT is the address the stack serves on).
const FanoutFunction = "fanout"

// Handler serves every API of the stack on one address.
func (s *Stack) Handler() http.Handler { return s.Lambda.Wrap(s.WS.Wrap(s.HTTP)) }

// NewStack wires a's handlers (app.Local) behind the emulated APIs; a's
// fan-out delivers live events from both ingest and ws-message through the
// SDK clients it was built with (WS_MANAGEMENT_ENDPOINT, LAMBDA_ENDPOINT),
// as behind AWS. Each route gets its own handler, as each is its own
// function in AWS.
func NewStack(a *app.App, log *slog.Logger) *Stack {
	return newStack(a, log, false)
}

// NewInProcessStack is NewStack with the handlers' posts to @connections
// and their asynchronous Invokes of the fan-out function served in this
// process (WebSocketAPI.Post, LambdaAPI.Invoker): the same checks, socket
// writes, queue and retries, without an HTTP request and a SigV4 signature
// per message. The handlers are unchanged; the fan-out's Sender (and Async,
// when set) are replaced. Behind API Gateway each post is a network call, so
// this is the localdev path only; NewStack keeps the SDK path that
// localdev/roundtrips counts.
func NewInProcessStack(a *app.App, log *slog.Logger) *Stack {
	return newStack(a, log, true)
}

func newStack(a *app.App, log *slog.Logger, inProcess bool) *Stack {
	ws := &WebSocketAPI{Log: log}
	lambda := &LambdaAPI{Functions: map[string]AsyncHandler{}, Log: log}
	if inProcess && a.Fanout != nil {
		a.Fanout.Sender = inProcessSender{ws}
		if a.Fanout.Async != nil {
			a.Fanout.Async = lambda.Invoker(FanoutFunction)
		}
	}
	lambda.Functions[FanoutFunction] = a.FanoutBatch()
	ws.Connect, ws.Default, ws.Disconnect = a.WebSocket(), a.WebSocket(), a.WebSocket()
	routes := HTTPRoutes(map[string]HTTPHandler{"ingest": a.IngestHTTP(), "query": a.QueryHTTP()}, a.Media != nil)
	return &Stack{
		HTTP:   &HTTPAPI{Routes: routes},
		WS:     ws,
		Lambda: lambda,
	}
}

// inProcessSender is the WebSocketAPI as the handlers' sessions.Sender,
// with DeleteConnection under the name apigw.Management gives it.
type inProcessSender struct{ *WebSocketAPI }

// Disconnect closes the connection from the server side.
func (s inProcessSender) Disconnect(ctx context.Context, id string) error {
	return s.DeleteConnection(ctx, id)
}

// HTTPRoutes is the HTTP API's route table (lambdas.HTTPRoutes, with
// media lambdas.MediaRoutes) over the handler of each function.
func HTTPRoutes(byFunction map[string]HTTPHandler, media bool) map[string]HTTPHandler {
	routes := map[string]HTTPHandler{}
	add := func(rs []lambdas.HTTPRoute) {
		for _, r := range rs {
			routes[r.Key()] = byFunction[r.Function]
		}
	}
	add(lambdas.HTTPRoutes)
	if media {
		add(lambdas.MediaRoutes)
	}
	return routes
}
