package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AsyncHandler is a Lambda handler invoked with a raw JSON event.
type AsyncHandler = func(ctx context.Context, payload json.RawMessage) error

// CallHandler is a Lambda handler that answers a payload (a synchronous
// invoke); an error is a function error.
type CallHandler = func(ctx context.Context, payload json.RawMessage) ([]byte, error)

// JSONCall is a CallHandler over a typed handler, as lambda.Start decodes
// the event and encodes the answer.
func JSONCall[In, Out any](h func(context.Context, In) (Out, error)) CallHandler {
	return func(ctx context.Context, payload json.RawMessage) ([]byte, error) {
		var in In
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, err
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// Lambda's limits and behaviour for asynchronous invocations the emulator
// keeps.
const (
	MaxAsyncPayload = 256 << 10 // larger: 413 RequestEntityTooLargeException
	AsyncRetries    = 2         // a failed run is retried twice
	// FunctionTimeout bounds one run (the fan-out function's timeout).
	FunctionTimeout = 60 * time.Second
)

// LambdaAPI emulates the Lambda Invoke API (POST
// /2015-03-31/functions/{name}/invocations) for the functions it holds.
// InvocationType Event answers 202 at once and runs the handler in the
// background, Concurrency runs at a time (Lambda's parallel instances),
// retrying a failed run AsyncRetries times; RequestResponse runs it before
// answering. Requests are SigV4-signed by the SDK; signatures are not
// checked.
type LambdaAPI struct {
	Functions map[string]AsyncHandler
	// Calls are the functions invoked synchronously with an answer
	// (InvocationType RequestResponse): the push dialer.
	Calls       map[string]CallHandler
	Concurrency int // default 10
	Log         *slog.Logger
	// InvokeLatency is spent by each Invoke served in process
	// (InProcessInvoker) before it returns, as an Invoke request to Lambda
	// costs its caller (Costs.AWS.LambdaInvoke, LAMBDA_INVOKE_LATENCY); an
	// Invoke over HTTP pays it in the caller's SDK client instead.
	InvokeLatency time.Duration

	once sync.Once
	sem  chan struct{}
	wg   sync.WaitGroup
	runs atomic.Int64
	byFn sync.Map // function name → *atomic.Int64
}

// Runs is the number of asynchronous runs that succeeded so far, of every
// function.
func (l *LambdaAPI) Runs() int64 { return l.runs.Load() }

// RunsOf is the number of asynchronous runs of function name that
// succeeded so far (the fan-out function's, apart from the push
// function's greetings).
func (l *LambdaAPI) RunsOf(name string) int64 {
	if n, ok := l.byFn.Load(name); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// Wrap serves the Invoke API on the address of next.
func (l *LambdaAPI) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/") {
			l.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *LambdaAPI) log() *slog.Logger {
	if l.Log == nil {
		return slog.Default()
	}
	return l.Log
}

// ServeHTTP serves one Invoke.
func (l *LambdaAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/2015-03-31/functions/")
	name, ok := strings.CutSuffix(rest, "/invocations")
	if r.Method != http.MethodPost || !ok {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "no such route")
		return
	}
	name, err := url.PathUnescape(name)
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "bad function name")
		return
	}
	// A function ARN ends in :function:{name}.
	if i := strings.LastIndex(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
	}
	h, call := l.Functions[name], l.Calls[name]
	if h == nil && call == nil {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, MaxAsyncPayload+1))
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", "could not read payload")
		return
	}
	if err := checkPayload(payload); err != nil {
		awsError(w, err.status, err.code, err.msg)
		return
	}
	switch t := r.Header.Get("X-Amz-Invocation-Type"); {
	case call != nil && (t == "" || t == "RequestResponse"):
		ctx, cancel := context.WithTimeout(r.Context(), FunctionTimeout)
		defer cancel()
		out, err := call(ctx, payload)
		if err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.WriteHeader(http.StatusOK)
			_ = json.NewEncoder(w).Encode(map[string]string{"errorMessage": err.Error()})
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
	case h == nil:
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "unsupported invocation type "+t)
	case t == "Event":
		l.queue(name, h, payload)
		w.WriteHeader(http.StatusAccepted)
	case t == "" || t == "RequestResponse":
		ctx, cancel := context.WithTimeout(r.Context(), FunctionTimeout)
		defer cancel()
		if err := h(ctx, payload); err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.WriteHeader(http.StatusOK)
			_ = json.NewEncoder(w).Encode(map[string]string{"errorMessage": err.Error()})
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("null"))
	default:
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "unsupported invocation type "+t)
	}
}

// invokeError is a refused Invoke as the Lambda API reports it.
type invokeError struct {
	status    int
	code, msg string
}

func (e *invokeError) Error() string { return e.code + ": " + e.msg }

// checkPayload applies Lambda's checks of an asynchronous payload.
func checkPayload(payload []byte) *invokeError {
	if len(payload) > MaxAsyncPayload {
		return &invokeError{http.StatusRequestEntityTooLarge, "RequestEntityTooLargeException", "payload is larger than 256 KB"}
	}
	if !json.Valid(payload) {
		return &invokeError{http.StatusBadRequest, "InvalidRequestContentException", "payload is not JSON"}
	}
	return nil
}

// queue accepts one asynchronous invocation and runs it in the background.
func (l *LambdaAPI) queue(name string, h AsyncHandler, payload []byte) {
	l.wg.Add(1)
	go l.runAsync(name, h, payload)
}

// Invoker is an asynchronous Invoke of function name without the HTTP hop,
// for callers in the emulator's process (localdev's in-process path;
// fanout.Invoker): the same checks, queue and retries as an Invoke with
// InvocationType Event.
func (l *LambdaAPI) Invoker(name string) *InProcessInvoker {
	return &InProcessInvoker{l: l, name: name}
}

// Caller is a synchronous Invoke of function name (in Calls) without the
// HTTP hop, for callers in the emulator's process (push.Caller).
func (l *LambdaAPI) Caller(name string) *InProcessCaller {
	return &InProcessCaller{l: l, name: name}
}

// InProcessCaller invokes one function of a LambdaAPI synchronously.
type InProcessCaller struct {
	l    *LambdaAPI
	name string
}

// Call runs the function with payload and returns its answer.
func (c *InProcessCaller) Call(ctx context.Context, payload []byte) ([]byte, error) {
	spend(c.l.InvokeLatency)
	h := c.l.Calls[c.name]
	if h == nil {
		return nil, fmt.Errorf("emulator: call %s: function not found", c.name)
	}
	if err := checkPayload(payload); err != nil {
		return nil, fmt.Errorf("emulator: call %s: %w", c.name, err)
	}
	return h(ctx, payload)
}

// InProcessInvoker invokes one function of a LambdaAPI asynchronously.
type InProcessInvoker struct {
	l    *LambdaAPI
	name string
}

// InvokeAsync queues payload for the function.
func (i *InProcessInvoker) InvokeAsync(_ context.Context, payload []byte) error {
	spend(i.l.InvokeLatency)
	h := i.l.Functions[i.name]
	if h == nil {
		return fmt.Errorf("emulator: invoke %s: function not found", i.name)
	}
	if err := checkPayload(payload); err != nil {
		return fmt.Errorf("emulator: invoke %s: %w", i.name, err)
	}
	i.l.queue(i.name, h, append([]byte(nil), payload...))
	return nil
}

func (l *LambdaAPI) runAsync(name string, h AsyncHandler, payload json.RawMessage) {
	defer l.wg.Done()
	l.once.Do(func() {
		n := l.Concurrency
		if n <= 0 {
			n = 10
		}
		l.sem = make(chan struct{}, n)
	})
	l.sem <- struct{}{}
	defer func() { <-l.sem }()
	for attempt := 0; attempt <= AsyncRetries; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), FunctionTimeout)
		err := h(ctx, payload)
		cancel()
		if err == nil {
			l.runs.Add(1)
			n, _ := l.byFn.LoadOrStore(name, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return
		}
		l.log().Warn("emulator: async invocation failed", "function", name, "attempt", attempt+1, "err", err)
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
}

// Wait blocks until every queued asynchronous invocation has run.
func (l *LambdaAPI) Wait() { l.wg.Wait() }
