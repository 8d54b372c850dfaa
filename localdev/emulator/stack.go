package emulator

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/buzzrelay/relay/shared/service/push"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// Stack is the relay's API Gateway configuration in local form, the same
// route table as infra/ (shared/wiring/lambdas): POST /events to ingest;
// POST /query, POST /count, GET /, POST / (NIP-86) and GET /healthz to
// query; $connect, $default and $disconnect to the three WebSocket
// functions; the Lambda Invoke API for the fan-out function
// (FanoutFunction), which fo's asynchronous dispatch calls, and for the
// push function (PushFunction), which $connect hands each connection to
// and Liveness runs on a timer. Every handler is the one its Lambda
// starts.
type Stack struct {
	HTTP   *HTTPAPI
	WS     *WebSocketAPI
	Lambda *LambdaAPI
	// DirectMax, when media is served, is the largest upload body that
	// goes through a function; the Front (front.go, CloudFront's stand-in)
	// takes larger PUT /media/upload bodies to the bucket. 0: no front.
	DirectMax int64
	// Scheduler is EventBridge Scheduler's API (workflows.go) when the
	// workflow runner is one of the functions, else nil.
	Scheduler *SchedulerAPI
}

// FanoutFunction is the name the fan-out function has in localdev
// (FANOUT_FUNCTION; LAMBDA_ENDPOINT is the address the stack serves on).
const FanoutFunction = "fanout"

// PushSenderFunction is the name the push sender (NIP-9a callbacks,
// NIP-PL wakes) has in localdev and the tests.
const PushSenderFunction = "push-sender"

// PushDialerFunction is the name the push dialer (the sender's HTTP side,
// invoked synchronously) has in localdev and the tests
// (PUSH_DIALER_FUNCTION).
const PushDialerFunction = "push-dialer"

// WorkflowRunnerFunction is the name the workflow runner has in localdev
// and the tests (WORKFLOW_RUNNER_FUNCTION).
const WorkflowRunnerFunction = "workflow-runner"

// PushFunction is the name the push function has in localdev
// (PUSH_FUNCTION): $connect's greeting and the liveness timer (Liveness)
// invoke it.
const PushFunction = "ws-push"

// SweepFunction is the name the NIP-40 expiry sweep has in localdev: its
// timer (ExpirySweep) invokes it.
const SweepFunction = "expiry-sweep"

// Handler serves every API of the stack on one address.
func (s *Stack) Handler() http.Handler {
	h := s.Lambda.Wrap(s.WS.Wrap(s.HTTP))
	if s.Scheduler != nil {
		h = s.Scheduler.Wrap(h)
	}
	if s.DirectMax > 0 {
		return &Front{Next: h, DirectMax: s.DirectMax}
	}
	return h
}

// Charge sets the costs the stack adds (costs.go): API Gateway's on the
// WebSocket API, the Lambda Invoke's on the Invokes served in process.
func (s *Stack) Charge(c Costs) {
	s.WS.Costs = c
	s.Lambda.InvokeLatency = c.AWS.LambdaInvoke
}

// NewStack wires a's handlers (app.Local) behind the emulated APIs; a's
// fan-out delivers live events from both ingest and ws-message through the
// SDK clients it was built with (WS_MANAGEMENT_ENDPOINT, LAMBDA_ENDPOINT),
// as behind AWS. Each route gets its own handler, as each is its own
// function in AWS.
func NewStack(a *app.App, log *slog.Logger) *Stack {
	return newStack(a, log, false)
}

// NewInProcessStack is NewStack with the handlers' posts to @connections
// and their asynchronous Invokes of the fan-out and push functions served
// in this process (WebSocketAPI.Post, LambdaAPI.Invoker): the same checks, socket
// writes, queue and retries, without an HTTP request and a SigV4 signature
// per message. The handlers are unchanged; the fan-out's Sender (and Async,
// when set), the push function's Sender and the greeter are replaced. Behind API Gateway each post is a network call, so
// this is the localdev path only; NewStack keeps the SDK path that
// localdev/roundtrips counts.
func NewInProcessStack(a *app.App, log *slog.Logger) *Stack {
	return newStack(a, log, true)
}

func newStack(a *app.App, log *slog.Logger, inProcess bool) *Stack {
	ws := &WebSocketAPI{Log: log}
	lambda := &LambdaAPI{Functions: map[string]AsyncHandler{}, Calls: map[string]CallHandler{}, Log: log}
	if inProcess && a.Fanout != nil {
		a.Fanout.Sender = inProcessSender{ws}
		if a.Fanout.Async != nil {
			a.Fanout.Async = lambda.Invoker(FanoutFunction)
		}
	}
	if inProcess && a.Push != nil {
		a.Push.Sender = inProcessSender{ws}
	}
	if inProcess && a.Greeter != nil {
		a.Greeter = lambda.Invoker(PushFunction)
	}
	lambda.Functions[FanoutFunction] = a.FanoutBatch()
	if a.Notify != nil {
		if a.Notify.Sender != nil {
			a.Notify.Sender = lambda.Invoker(PushSenderFunction)
		}
		lambda.Functions[PushSenderFunction] = a.PushSender()
		// The dialer, under the same callback policy.
		lambda.Calls[PushDialerFunction] = JSONCall(app.PushDialer(a.Config.Push.AllowPrivate))
		if inProcess && a.Notify.Dialer != nil {
			a.Notify.Dialer = push.Remote{Call: lambda.Caller(PushDialerFunction)}
		}
	}
	if a.Push != nil {
		lambda.Functions[PushFunction] = a.PushHandler()
	}
	if a.Sweep != nil {
		lambda.Functions[SweepFunction] = a.SweepHandler()
	}
	if a.Workflows != nil {
		lambda.Functions[WorkflowRunnerFunction] = a.WorkflowRunner()
		if a.Workflows.Runner != nil {
			a.Workflows.Runner = lambda.Invoker(WorkflowRunnerFunction)
		}
	}
	ws.Connect, ws.Default, ws.Disconnect = a.WebSocket(), a.WebSocket(), a.WebSocket()
	routes := HTTPRoutes(map[string]HTTPHandler{"ingest": a.IngestHTTP(), "query": a.QueryHTTP()}, a.Media != nil)
	s := &Stack{
		HTTP:   &HTTPAPI{Routes: routes},
		WS:     ws,
		Lambda: lambda,
	}
	if a.Media != nil {
		s.DirectMax = a.Media.Limits.DirectMaxBytes
	}
	if a.Workflows != nil {
		// The runner's schedules and wakes (SchedulerEnv points its
		// Scheduler client here).
		s.Scheduler = &SchedulerAPI{Lambda: lambda, Log: log}
	}
	return s
}

// inProcessSender is the WebSocketAPI as the handlers' wire.Sender,
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

// ScheduledEvent is the event the liveness timer invokes the push
// function with: EventBridge's scheduled event, as the schedule of AWS
// sends it (the function reads any event other than a greeting as a
// tick).
var ScheduledEvent = []byte(`{"version":"0","source":"aws.events","detail-type":"Scheduled Event","detail":{}}`)

// Liveness invokes the push function asynchronously every period until
// ctx ends: the schedule that makes it post the liveness frame to every
// open connection (in AWS once a minute and again 30 s later,
// lambdas.LivenessDelaySeconds). It returns at once; a stack without the
// push function, or a period of 0, runs nothing.
func (s *Stack) Liveness(ctx context.Context, period time.Duration, log *slog.Logger) {
	s.every(ctx, PushFunction, period, log)
}

// ExpirySweep invokes the expiry sweep asynchronously every period until
// ctx ends, as the EventBridge Scheduler schedule does in AWS
// (lambdas.SweepRateHours). It returns at once; a stack without the
// sweep, or a period of 0, runs nothing.
func (s *Stack) ExpirySweep(ctx context.Context, period time.Duration, log *slog.Logger) {
	s.every(ctx, SweepFunction, period, log)
}

// every invokes fn asynchronously with ScheduledEvent every period until
// ctx ends.
func (s *Stack) every(ctx context.Context, fn string, period time.Duration, log *slog.Logger) {
	if period <= 0 || s.Lambda.Functions[fn] == nil {
		return
	}
	invoke := s.Lambda.Invoker(fn)
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := invoke.InvokeAsync(ctx, ScheduledEvent); err != nil && log != nil {
					log.Warn("emulator: scheduled invoke", "function", fn, "err", err)
				}
			}
		}
	}()
}
