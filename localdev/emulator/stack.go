package emulator

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/buzzrelay/relay/shared/wiring/app"
)

// Stack is the relay's API Gateway configuration in local form, the same
// route table as infra/: POST /events to ingest; POST /query, POST /count,
// GET /, POST / (NIP-86) and GET /healthz to query; $connect, $default and
// $disconnect to the three WebSocket functions; the Lambda Invoke API for
// the fan-out function (FanoutFunction), which fo's asynchronous dispatch
// calls. Every handler is the one its Lambda starts.
type Stack struct {
	HTTP   *HTTPAPI
	WS     *WebSocketAPI
	Lambda *LambdaAPI
}

// The media routes (MEDIA_BUCKET set), as infra/ declares them: uploads
// and deletes to ingest, downloads, HEAD and list to query.
var (
	MediaWriteRoutes = []string{"PUT /upload", "HEAD /upload", "PUT /media/upload", "HEAD /media/upload",
		"POST /media/upload", "DELETE /{blob}", "DELETE /media/{blob}"}
	MediaReadRoutes = []string{"GET /{blob}", "HEAD /{blob}", "GET /list/{pubkey}", "GET /media/{blob}", "HEAD /media/{blob}"}
)

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
	queryFn := a.QueryHTTP()
	ingestFn := a.IngestHTTP()
	routes := map[string]HTTPHandler{
		"POST /events": ingestFn,
		"POST /query":  queryFn,
		"POST /count":  queryFn,
		"GET /":        queryFn,
		"POST /":       queryFn, // NIP-86 management
		"GET /healthz": queryFn,
	}
	if a.Media != nil {
		for _, k := range MediaWriteRoutes {
			routes[k] = ingestFn
		}
		for _, k := range MediaReadRoutes {
			routes[k] = queryFn
		}
	}
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
