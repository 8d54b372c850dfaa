package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Processes runs a function's own binary (built from functions/{name}) as
// separate processes, as Lambda runs each instance of a function on its
// own, and serves them the Lambda Runtime API: the protocol aws-lambda-go's
// lambda.Start speaks when AWS_LAMBDA_RUNTIME_API is set (GET
// .../invocation/next, POST .../invocation/{id}/response or /error). Each
// process runs one invocation at a time; Invoke hands a payload to the next
// free one and waits for its answer, so a Processes is the AsyncHandler of
// a LambdaAPI function, which keeps Lambda's queue, parallelism and
// retries. With ProcessOptions.OnDemand no process runs until the first
// invocation, and another starts (up to Count) when an invocation finds
// every running one busy: Lambda's cold starts and scaling out, and a
// test that calls three functions starts three processes, not the stack's
// twenty.
//
// Why in localdev: the fan-out function runs on instances of its own
// behind AWS, so its CPU is never the publisher's. On one machine it
// shares the cores with the relay; run niced, its processes get what the
// relay leaves and a publisher is served first, as in AWS (the figures of
// docs/benchmarks.md say what each way costs).
type Processes struct {
	name  string
	queue chan *invocation
	srv   *http.Server
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string]*invocation
	cmds    []*exec.Cmd
	closed  bool
	started int // processes started (each kept until Close)
	opts    ProcessOptions
	env     []string // every process's environment
	wg      sync.WaitGroup
	tmp     string // the build's directory, removed by Close
	outMu   sync.Mutex
}

// lineWriter hands one process's output to next a whole line at a time
// (next is shared by the processes; mu orders their lines).
type lineWriter struct {
	next io.Writer
	mu   *sync.Mutex
	buf  []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.mu.Lock()
		_, err := w.next.Write(w.buf[:i+1])
		w.mu.Unlock()
		w.buf = w.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}

// ProcessOptions say how to run a function's processes.
type ProcessOptions struct {
	// Binary is the function's executable; "" builds functions/{name}
	// (BuildFunction) into a directory Close removes.
	Binary string
	Env    []string // its environment (KEY=value), without AWS_LAMBDA_RUNTIME_API
	Count  int      // processes (instances), at least 1
	// OnDemand starts the processes as invocations need them (none
	// before the first, one more when every running one is busy, at most
	// Count), as Lambda starts instances; false starts Count at once.
	OnDemand bool
	// Warm, with OnDemand, is how many start at once all the same (the
	// instances an earlier burst left warm); the rest start on demand.
	Warm int
	// Nice is the processes' niceness (0..19, nice(1)); 0 runs them at the
	// relay's priority.
	Nice   int
	Output io.Writer // their stdout and stderr (nil: discarded)
	Log    *slog.Logger
}

// invocation is one payload handed to a process.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	done     chan error
	response []byte // the function's answer, set before done
}

// StartProcesses serves the Runtime API on a loopback port and starts the
// processes of function name; a process that exits is started again until
// Close.
func StartProcesses(ctx context.Context, name string, o ProcessOptions) (*Processes, error) {
	var tmp string
	if o.Binary == "" {
		dir, err := os.MkdirTemp("", "buzz-"+name+"-")
		if err != nil {
			return nil, fmt.Errorf("emulator: build %s: %w", name, err)
		}
		if o.Binary, err = BuildFunction(ctx, name, dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		tmp = dir
	}
	if o.Count < 1 {
		o.Count = 1
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return nil, fmt.Errorf("emulator: runtime API of %s: %w", name, err)
	}
	p := &Processes{name: name, queue: make(chan *invocation), log: o.Log, pending: map[string]*invocation{}, tmp: tmp}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	env := append(append([]string{}, o.Env...), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(),
		"AWS_LAMBDA_FUNCTION_NAME="+name, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024")
	p.opts, p.env = o, env
	start := o.Count
	if o.OnDemand {
		start = min(o.Warm, o.Count)
	}
	for range start {
		p.grow()
	}
	return p, nil
}

// Started is how many processes p has started (OnDemand: so far).
func (p *Processes) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// grow starts one more process, unless Count run already or p is closed;
// it says whether it started one.
func (p *Processes) grow() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.started >= p.opts.Count {
		return false
	}
	i := p.started
	p.started++
	p.wg.Add(1)
	go p.keep(i, p.opts, p.env)
	return true
}

// NiceCommand is the command running binary with args at niceness nice
// (0: as this process). nice(1) sets the niceness before exec, so every
// thread of the Go runtime has it (setpriority on a pid changes one
// thread).
func NiceCommand(ctx context.Context, nice int, binary string, args ...string) *exec.Cmd {
	if nice > 0 {
		return exec.CommandContext(ctx, "nice", append([]string{"-n", strconv.Itoa(nice), binary}, args...)...)
	}
	return exec.CommandContext(ctx, binary, args...)
}

// keep runs process i until Close, starting it again when it exits.
func (p *Processes) keep(i int, o ProcessOptions, env []string) {
	defer p.wg.Done()
	for {
		cmd := NiceCommand(context.Background(), o.Nice, o.Binary)
		out := &lineWriter{next: o.Output, mu: &p.outMu}
		cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		err := cmd.Start()
		if err == nil {
			p.cmds = append(p.cmds, cmd)
		}
		p.mu.Unlock()
		if err == nil {
			err = cmd.Wait()
		}
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return
		}
		p.log.Warn("emulator: function process exited; starting it again", "function", p.name, "process", i, "err", err)
		time.Sleep(time.Second)
	}
}

// Invoke runs payload in the next free process and returns its error, if
// any (an AsyncHandler).
func (p *Processes) Invoke(ctx context.Context, payload json.RawMessage) error {
	_, err := p.Call(ctx, payload)
	return err
}

// Call runs payload in the next free process and returns the function's
// answer (a synchronous invoke); a function error is an error.
func (p *Processes) Call(ctx context.Context, payload json.RawMessage) ([]byte, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(FunctionTimeout)
	}
	inv := &invocation{id: uuid.NewString(), payload: payload, deadline: deadline, done: make(chan error, 1)}
	select {
	case p.queue <- inv: // a running process was waiting
	default:
		p.grow() // every running one is busy (or none runs): scale out, if Count allows
		select {
		case p.queue <- inv:
		case <-ctx.Done():
			return nil, fmt.Errorf("emulator: %s: no process took the invocation: %w", p.name, ctx.Err())
		}
	}
	select {
	case err := <-inv.done:
		return inv.response, err
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.pending, inv.id)
		p.mu.Unlock()
		return nil, fmt.Errorf("emulator: %s: invocation %s timed out: %w", p.name, inv.id, ctx.Err())
	}
}

const runtimePrefix = "/2018-06-01/runtime/"

// serve is the Runtime API.
func (p *Processes) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, runtimePrefix)
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		p.next(w, r)
	case r.Method == http.MethodPost && path == "init/error":
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		p.log.Error("emulator: function init failed", "function", p.name, "error", string(body))
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "invocation/"):
		id, verb, _ := strings.Cut(strings.TrimPrefix(path, "invocation/"), "/")
		p.answer(w, r, id, verb)
	default:
		http.Error(w, "no such runtime route", http.StatusNotFound)
	}
}

// next hands the next invocation to the process asking.
func (p *Processes) next(w http.ResponseWriter, r *http.Request) {
	var inv *invocation
	select {
	case inv = <-p.queue:
	case <-r.Context().Done():
		return
	}
	p.mu.Lock()
	p.pending[inv.id] = inv
	p.mu.Unlock()
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:"+p.name)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(inv.payload)
}

// answer takes an invocation's response or error.
func (p *Processes) answer(w http.ResponseWriter, r *http.Request, id, verb string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 6<<20))
	p.mu.Lock()
	inv := p.pending[id]
	delete(p.pending, id)
	p.mu.Unlock()
	if inv == nil {
		http.Error(w, "unknown invocation "+id, http.StatusBadRequest)
		return
	}
	switch verb {
	case "response":
		inv.response = body
		inv.done <- nil
	case "error":
		var e struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(body, &e)
		inv.done <- fmt.Errorf("emulator: %s: %s: %s", p.name, e.Type, e.Message)
	default:
		inv.done <- fmt.Errorf("emulator: %s: runtime answered %q", p.name, verb)
		http.Error(w, "no such runtime route", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// Crash kills every process of the function at once (SIGKILL, as a Lambda
// instance that runs out of memory or is torn down dies mid-run) and fails
// the invocations they were running with Runtime.ExitError, as Lambda
// reports them: the LambdaAPI retries an asynchronous one. The processes
// are started again (keep).
func (p *Processes) Crash() int {
	p.mu.Lock()
	killed := 0
	for _, c := range p.cmds {
		if c.Process != nil && c.Process.Kill() == nil {
			killed++
		}
	}
	pending := p.pending
	p.pending = map[string]*invocation{}
	p.mu.Unlock()
	for _, inv := range pending {
		inv.done <- fmt.Errorf("emulator: %s: Runtime.ExitError: the process was killed mid-run", p.name)
	}
	return killed
}

// Close stops the processes and the Runtime API.
func (p *Processes) Close() {
	p.mu.Lock()
	p.closed = true
	for _, c := range p.cmds {
		if c.Process != nil {
			_ = c.Process.Signal(os.Interrupt)
		}
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.mu.Lock()
		for _, c := range p.cmds {
			if c.Process != nil {
				_ = c.Process.Kill()
			}
		}
		p.mu.Unlock()
		<-done
	}
	_ = p.srv.Close()
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
	}
}

// Environ is env as a process environment (KEY=value) with each of set
// replacing or adding its key.
func Environ(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// BuildFunction builds functions/{name} of the module in the current
// directory (or above) into dir and returns the executable's path.
func BuildFunction(ctx context.Context, name, dir string) (string, error) {
	if err := BuildFunctions(ctx, dir, name); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
