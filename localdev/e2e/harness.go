// Package e2e runs the relay end to end: the same handlers the Lambdas run,
// behind the localdev API Gateway emulator (HTTP routes, WebSocket routes
// and the @connections API on one loopback port), over a real Postgres. The
// tests drive it with real nostr clients (go-nostr, and nostr-tools from
// npm); localdev/wsbench uses the same harness.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// Options tune a harness relay.
type Options struct {
	// MaxConns is the pool size (default 16, as localdev).
	MaxConns int
	// Log receives the handlers' JSON logs (default: discarded).
	Log *slog.Logger
	// IdleTimeout and Lifetime override API Gateway's 10 min and 2 h.
	IdleTimeout, Lifetime time.Duration
	// Env adds to (or overrides) the environment the handlers are
	// configured with, e.g. DB_CONNECT_TIMEOUT.
	Env map[string]string
	// FanoutInlineMax and FanoutBatchSize override FANOUT_INLINE_MAX and
	// FANOUT_BATCH_SIZE (audiences above InlineMax go to the fan-out
	// function, emulated).
	FanoutInlineMax, FanoutBatchSize int
	// InProcess serves the handlers' posts and Invokes in process, as
	// `make dev` does (emulator.NewInProcessStack).
	InProcess bool
	// FanoutProcesses, when above 0, runs the fan-out function as that
	// many processes of its own binary (emulator.Processes), at niceness
	// FanoutNice, instead of in this process; their posts reach the
	// @connections API over HTTP, as from Lambda.
	FanoutProcesses, FanoutNice int
	// Push turns push notifications on (PUSH_SENDER_FUNCTION, callbacks to
	// this machine allowed); PushSenderProcesses, when above 0, runs the
	// push sender as that many processes of functions/push-sender's own
	// binary (Relay.PushSender) instead of in this process.
	Push                bool
	PushSenderProcesses int
	// Workflows turns Buzz's workflows on (WORKFLOW_RUNNER_FUNCTION, the
	// runner in this process); WorkflowPrivateWebhooks lets call_webhook
	// reach this machine; WorkflowRunnerProcesses, when above 0, runs the
	// runner as that many processes of functions/workflow-runner's own
	// binary (Relay.Runner).
	Workflows, WorkflowPrivateWebhooks bool
	WorkflowRunnerProcesses            int
	// Media turns the Blossom media service on over a local S3 server
	// (localdev/s3local) of the relay's own, on a free port, its data in
	// MediaDir (default: a temporary folder removed on Close).
	Media    bool
	MediaDir string
	// Costs are the emulated API Gateway and Lambda costs
	// (emulator.Costs); when zero, the environment's (APIGW_COSTS=on,
	// ...: emulator.CostsFromEnv), so that `APIGW_COSTS=on make bench`
	// runs the benchmarks with them.
	Costs emulator.Costs
	// Binaries, when set, runs every route through its function's own
	// binary, as BUZZ_LAMBDA=processes make dev does (processes.go).
	Binaries *Binaries
	// LivenessPeriod, when above 0, runs the push function's liveness
	// tick on a timer of that period, as make dev does every 30 s
	// (emulator.Stack.Liveness); 0: no tick.
	LivenessPeriod time.Duration
	// WrapWebSocket, when set, wraps the $connect, $default and
	// $disconnect handlers before the relay serves: a test's view of each
	// invocation (in process only; not with Binaries).
	WrapWebSocket func(emulator.WebSocketHandler) emulator.WebSocketHandler
	// Requests, when set, counts the AWS requests of every SDK client the
	// relay builds (awssdk.WithRequests).
	Requests *awssdk.Requests
}

// Relay is a running harness relay.
type Relay struct {
	HTTPURL string // http://127.0.0.1:port
	WSURL   string // ws://127.0.0.1:port
	DSN     string // the database it serves
	App     *app.App
	WS      *emulator.WebSocketAPI
	Lambda  *emulator.LambdaAPI
	// S3URL is the local S3 server's address (the directory's bucket, and
	// the media's with Options.Media).
	S3URL string
	srv   *http.Server
	errc  chan error
	procs *emulator.Processes
	// PushSender is the push sender's processes: those of
	// Options.PushSenderProcesses, or with BUZZ_LAMBDA=processes the
	// stack's (closed with it); else nil.
	PushSender *emulator.Processes
	// Runner is the workflow runner's processes of
	// Options.WorkflowRunnerProcesses; Stack the emulated stack (its
	// schedules: FireSchedules).
	Runner *emulator.Processes
	Stack  *emulator.Stack
	s3     *s3local.Server
	s3dir  string // removed on Close
	// Functions is the process stack of Options.Binaries, else nil.
	Functions *emulator.ProcessStack
	// stopTicks ends the liveness timer.
	stopTicks context.CancelFunc
	// dropTable deletes the sessions' table.
	dropTable func()
}

// SessionTable creates a fresh sessions' table in the local DynamoDB
// (AWS_ENDPOINT_URL_DYNAMODB) and returns its name and its deletion.
func SessionTable(ctx context.Context) (string, func(), error) {
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		return "", nil, errors.New("e2e: the sessions need the local DynamoDB: source localdev/ddb.sh (make test does)")
	}
	c, err := ddbsessions.Client(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("e2e: %w", err)
	}
	table := "e2e-" + nostr.GeneratePrivateKey()[:12]
	if err := ddbsessions.CreateTable(ctx, c, table); err != nil {
		return "", nil, fmt.Errorf("e2e: %w", err)
	}
	return table, func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	}, nil
}

// Start serves the relay over the migrated database dsn on 127.0.0.1:0.
func Start(ctx context.Context, dsn string, o Options) (*Relay, error) {
	if o.MaxConns == 0 {
		o.MaxConns = 16
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("e2e: listen: %w", err)
	}
	addr := ln.Addr().String()
	env := map[string]string{
		"DATABASE_URL":           dsn,
		"BUZZ_PUBLIC_SCHEME":     "http",
		"DB_MAX_CONNS":           strconv.Itoa(o.MaxConns),
		"WS_MANAGEMENT_ENDPOINT": "http://" + addr,
		"RELAY_SECRET_KEY":       nostr.GeneratePrivateKey(),
		"RELAY_SEAL_KEY":         nostr.GeneratePrivateKey(), // 32 random bytes, hex
		"AWS_REGION":             "us-east-1",
		"FANOUT_FUNCTION":        emulator.FanoutFunction,
		"PUSH_FUNCTION":          emulator.PushFunction,
		"LAMBDA_ENDPOINT":        "http://" + addr,
	}
	if o.FanoutInlineMax > 0 {
		env["FANOUT_INLINE_MAX"] = strconv.Itoa(o.FanoutInlineMax)
	}
	if o.FanoutBatchSize > 0 {
		env["FANOUT_BATCH_SIZE"] = strconv.Itoa(o.FanoutBatchSize)
	}
	if o.Push || o.PushSenderProcesses > 0 {
		env["PUSH_SENDER_FUNCTION"] = emulator.PushSenderFunction
		env["PUSH_ALLOW_PRIVATE_CALLBACKS"] = "1"
		// Each try's request through the dialer, behind the emulated
		// Invoke API (its own binary with Binaries, else in process).
		env["PUSH_DIALER_FUNCTION"] = emulator.PushDialerFunction
	}
	if o.Workflows || o.WorkflowRunnerProcesses > 0 {
		env["WORKFLOW_RUNNER_FUNCTION"] = emulator.WorkflowRunnerFunction
		maps.Copy(env, emulator.SchedulerEnv(addr))
	}
	if o.WorkflowPrivateWebhooks {
		env["WORKFLOW_ALLOW_PRIVATE_WEBHOOKS"] = "1"
	}
	var s3 *s3local.Server
	var s3dir string
	{
		// The directory (what each host serves: NIP-11 and a new
		// connection's host without the database) lives in the bucket.
		if s3, s3dir, err = startS3(o); err != nil {
			ln.Close()
			return nil, err
		}
		env["AWS_ENDPOINT_URL_S3"] = s3.URL
	}
	if o.Media {
		env["MEDIA_BUCKET"] = MediaBucket
	}
	env["DIRECTORY_BUCKET"] = MediaBucket
	dropTable := func() {}
	{
		// The WebSocket sessions in a fresh table of the local DynamoDB
		// (AWS_ENDPOINT_URL_DYNAMODB: localdev/ddb.sh), as make dev and
		// the stack keep them (SESSION_TABLE).
		table, drop, err := SessionTable(ctx)
		if err != nil {
			ln.Close()
			return nil, err
		}
		env["SESSION_TABLE"], dropTable = table, drop
		env["AWS_ENDPOINT_URL_DYNAMODB"] = os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") // for the fan-out processes
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env["SESSION_TABLE"] = table
		o.Env["DIRECTORY_BUCKET"] = MediaBucket // the function processes' directory too
	}
	for k, v := range o.Env {
		env[k] = v
	}
	if o.Binaries != nil {
		r, err := startProcesses(ctx, dsn, o, ln, s3, s3dir)
		if err != nil {
			dropTable()
			return nil, err
		}
		r.dropTable = dropTable
		return r, nil
	}
	stopS3 := func() {
		dropTable()
		if s3 != nil {
			_ = s3.Close()
		}
		if s3dir != "" {
			_ = os.RemoveAll(s3dir)
		}
	}
	if o.Costs == (emulator.Costs{}) {
		if o.Costs, err = emulator.CostsFromEnv(os.Getenv); err != nil {
			ln.Close()
			stopS3()
			return nil, fmt.Errorf("e2e: %w", err)
		}
	}
	if d := o.Costs.AWS.AuroraRoundTrip; d > 0 && env["AURORA_ROUND_TRIP"] == "" {
		// The pool's share of the costs (the SDK clients read theirs
		// from this process's environment: awssdk.Load).
		env["AURORA_ROUND_TRIP"] = d.String()
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		ln.Close()
		stopS3()
		return nil, fmt.Errorf("e2e: config: %w", err)
	}
	if o.Requests != nil {
		ctx = awssdk.WithRequests(ctx, o.Requests)
	}
	a, err := app.Local(ctx, cfg, o.Log)
	if err != nil {
		ln.Close()
		stopS3()
		return nil, fmt.Errorf("e2e: build: %w", err)
	}
	newStack := emulator.NewStack
	if o.InProcess {
		newStack = emulator.NewInProcessStack
	}
	stack := newStack(a, o.Log)
	ws := stack.WS
	ws.IdleTimeout, ws.Lifetime = o.IdleTimeout, o.Lifetime
	if o.WrapWebSocket != nil {
		ws.Connect, ws.Default, ws.Disconnect = o.WrapWebSocket(ws.Connect), o.WrapWebSocket(ws.Default), o.WrapWebSocket(ws.Disconnect)
	}
	stack.Charge(o.Costs)
	r := &Relay{
		HTTPURL: "http://" + addr, WSURL: "ws://" + addr, DSN: dsn, App: a, WS: ws, Lambda: stack.Lambda, Stack: stack,
		srv:  &http.Server{Handler: stack.Handler(), ReadHeaderTimeout: 10 * time.Second},
		errc: make(chan error, 1),
		s3:   s3, s3dir: s3dir, dropTable: dropTable,
	}
	if s3 != nil {
		r.S3URL = s3.URL
	}
	if o.FanoutProcesses > 0 {
		if err := r.startFanout(ctx, o, env); err != nil {
			ln.Close()
			a.Store.Close()
			return nil, err
		}
	}
	if o.PushSenderProcesses > 0 {
		if err := r.startPushSender(ctx, o, env); err != nil {
			ln.Close()
			a.Store.Close()
			return nil, err
		}
	}
	if o.WorkflowRunnerProcesses > 0 {
		set := maps.Clone(env)
		set["DB_MAX_CONNS"] = "4"
		procs, err := emulator.StartProcesses(ctx, emulator.WorkflowRunnerFunction, emulator.ProcessOptions{
			Env: emulator.Environ(nil, set), Count: o.WorkflowRunnerProcesses, Log: o.Log})
		if err != nil {
			ln.Close()
			a.Store.Close()
			return nil, err
		}
		r.Runner = procs
		r.Lambda.Functions[emulator.WorkflowRunnerFunction] = procs.Invoke
	}
	r.startLiveness(stack, o)
	go func() { r.errc <- r.srv.Serve(ln) }()
	return r, nil
}

// startLiveness runs the liveness timer of o.LivenessPeriod until Close.
func (r *Relay) startLiveness(st *emulator.Stack, o Options) {
	ctx, cancel := context.WithCancel(context.Background())
	r.stopTicks = cancel
	st.Liveness(ctx, o.LivenessPeriod, o.Log)
}

// startFanout runs functions/fanout as o.FanoutProcesses processes with
// the handlers' environment.
func (r *Relay) startFanout(ctx context.Context, o Options, env map[string]string) error {
	set := maps.Clone(env)
	set["DB_MAX_CONNS"] = "4" // one invocation at a time, as a Lambda instance
	procs, err := emulator.StartProcesses(ctx, emulator.FanoutFunction, emulator.ProcessOptions{
		Env: emulator.Environ(nil, set), Count: o.FanoutProcesses, Nice: o.FanoutNice, Log: o.Log})
	if err != nil {
		return err
	}
	r.procs = procs
	r.Lambda.Functions[emulator.FanoutFunction] = procs.Invoke
	return nil
}

// startPushSender runs functions/push-sender as o.PushSenderProcesses
// processes with the handlers' environment.
func (r *Relay) startPushSender(ctx context.Context, o Options, env map[string]string) error {
	set := maps.Clone(env)
	set["DB_MAX_CONNS"] = "4"
	procs, err := emulator.StartProcesses(ctx, emulator.PushSenderFunction, emulator.ProcessOptions{
		Env: emulator.Environ(nil, set), Count: o.PushSenderProcesses, Log: o.Log})
	if err != nil {
		return err
	}
	r.PushSender = procs
	r.Lambda.Functions[emulator.PushSenderFunction] = procs.Invoke
	return nil
}

// Close stops the server (open sockets are dropped) and the pool.
func (r *Relay) Close() {
	// Not Shutdown: it waits 5 s for the SDK's spare, never-used
	// connections to the management API.
	if r.stopTicks != nil {
		r.stopTicks()
	}
	r.WS.CloseAll()
	r.Lambda.Wait()
	if r.Functions != nil {
		r.Functions.Close()
	}
	if r.procs != nil {
		r.procs.Close()
	}
	if r.PushSender != nil && r.Functions == nil {
		r.PushSender.Close() // else the stack's, closed above
	}
	if r.Runner != nil && r.Functions == nil {
		r.Runner.Close() // else the stack's, closed above
	}
	_ = r.srv.Close()
	if err := <-r.errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		r.App.Log.Warn("e2e: serve", "err", err)
	}
	r.App.Store.Close()
	if r.s3 != nil {
		_ = r.s3.Close()
	}
	if r.s3dir != "" {
		_ = os.RemoveAll(r.s3dir)
	}
	if r.dropTable != nil {
		r.dropTable()
	}
}

// MediaBucket is the bucket of a harness relay's local S3 server.
const MediaBucket = "buzz-media"

// startS3 serves the local S3 server of a relay with Options.Media.
func startS3(o Options) (*s3local.Server, string, error) {
	dir, tmp := o.MediaDir, ""
	if dir == "" {
		d, err := os.MkdirTemp("", "buzz-s3-")
		if err != nil {
			return nil, "", fmt.Errorf("e2e: s3 folder: %w", err)
		}
		dir, tmp = d, d
	}
	s, err := s3local.Start("127.0.0.1:0", dir, o.Log, MediaBucket)
	if err != nil {
		if tmp != "" {
			_ = os.RemoveAll(tmp)
		}
		return nil, "", fmt.Errorf("e2e: %w", err)
	}
	return s, tmp, nil
}
