package emulator

import (
	"log/slog"
	"net/http"

	"github.com/buzzrelay/relay/shared/app"
	"github.com/buzzrelay/relay/shared/fanout"
	"github.com/buzzrelay/relay/shared/query"
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

// FanoutFunction is the name the fan-out function has in localdev
// (FANOUT_FUNCTION; LAMBDA_ENDPOINT is the address the stack serves on).
const FanoutFunction = "fanout"

// Handler serves every API of the stack on one address.
func (s *Stack) Handler() http.Handler { return s.Lambda.Wrap(s.WS.Wrap(s.HTTP)) }

// NewStack wires a's handlers behind the emulated APIs; fo delivers live
// events from both ingest and ws-message, through the SDK clients it was
// built with (WS_MANAGEMENT_ENDPOINT, LAMBDA_ENDPOINT), as behind AWS.
func NewStack(a *app.App, fo *fanout.Fanout, log *slog.Logger) *Stack {
	return newStack(a, fo, log, false)
}

// NewInProcessStack is NewStack with the handlers' posts to @connections
// and their asynchronous Invokes of the fan-out function served in this
// process (WebSocketAPI.Post, LambdaAPI.Invoker): the same checks, socket
// writes, queue and retries, without an HTTP request and a SigV4 signature
// per message. The handlers are unchanged; fo's Sender (and Async, when
// set) are replaced. Behind API Gateway each post is a network call, so
// this is the localdev path only; NewStack keeps the SDK path that
// localdev/roundtrips counts.
func NewInProcessStack(a *app.App, fo *fanout.Fanout, log *slog.Logger) *Stack {
	return newStack(a, fo, log, true)
}

func newStack(a *app.App, fo *fanout.Fanout, log *slog.Logger, inProcess bool) *Stack {
	ws := &WebSocketAPI{Log: log}
	lambda := &LambdaAPI{Functions: map[string]AsyncHandler{}, Log: log}
	if inProcess {
		fo.Sender = ws
		if fo.Async != nil {
			fo.Async = lambda.Invoker(FanoutFunction)
		}
	}
	lambda.Functions[FanoutFunction] = a.FanoutFunction(fo)
	ws.Connect, ws.Default, ws.Disconnect = a.WSConnect(), a.WSMessage(fo), a.WSDisconnect()
	queryFn := a.QueryHTTP(query.New(a.Store, a.Signer))
	return &Stack{
		HTTP: &HTTPAPI{Routes: map[string]HTTPHandler{
			"POST /events": a.IngestHTTP(fo),
			"POST /query":  queryFn,
			"POST /count":  queryFn,
			"GET /":        queryFn,
			"POST /":       queryFn, // NIP-86 management
			"GET /healthz": queryFn,
		}},
		WS:     ws,
		Lambda: lambda,
	}
}
