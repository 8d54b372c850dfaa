package emulator

import (
	"log/slog"
	"net/http"

	"github.com/buzzrelay/relay/shared/app"
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

// NewStack wires a's handlers (app.Local) behind the emulated APIs; a's
// fan-out delivers live events from both ingest and ws-message. Each route
// gets its own handler, as each is its own function in AWS.
func NewStack(a *app.App, log *slog.Logger) *Stack {
	queryFn := a.QueryHTTP()
	return &Stack{
		HTTP: &HTTPAPI{Routes: map[string]HTTPHandler{
			"POST /events": a.IngestHTTP(),
			"POST /query":  queryFn,
			"POST /count":  queryFn,
			"GET /":        queryFn,
			"POST /":       queryFn, // NIP-86 management
			"GET /healthz": queryFn,
		}},
		WS: &WebSocketAPI{
			Connect:    a.WebSocket(),
			Default:    a.WebSocket(),
			Disconnect: a.WebSocket(),
			Log:        log,
		},
		Lambda: &LambdaAPI{Functions: map[string]AsyncHandler{FanoutFunction: a.FanoutBatch()}, Log: log},
	}
}
