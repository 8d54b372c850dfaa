package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/config"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

// Binaries is how a harness relay runs its functions' own binaries
// (BUZZ_LAMBDA=processes): built once into Dir (emulator.BuildFunctions),
// the relay key sealed by the local KMS at KMSEndpoint under KMSKeyARN.
// The process running the tests must reach that KMS too (its AWS SDK reads
// AWS_ENDPOINT_URL_KMS): Relay.App, the tests' handle on the database and
// the keys, opens the key migrate made.
type Binaries struct {
	Dir                            string
	KMSEndpoint, KMSKeyARN, Region string
}

// binaries is set once, before any test runs, by the suite's TestMain with
// BUZZ_LAMBDA=processes (make test runs the suite once so): every relay of
// the suite then runs its functions' own binaries, built once, with one
// local KMS.
var binaries *Binaries

// suiteOptions is o in the suite's mode.
func suiteOptions(o Options) Options {
	if o.Binaries == nil {
		o.Binaries = binaries
	}
	return o
}

// startProcesses is Start with o.Binaries: every route reaches its
// function's processes, each with the environment the CDK stack gives it
// plus the local endpoints and o.Env; migrate ran first, as the custom
// resource.
func startProcesses(ctx context.Context, dsn string, o Options, ln net.Listener, s3 *s3local.Server, s3dir string) (_ *Relay, err error) {
	addr := ln.Addr().String()
	b := o.Binaries
	setup := emulator.LocalSetup{Addr: addr, DatabaseURL: dsn, KMSEndpoint: b.KMSEndpoint, KMSKeyARN: b.KMSKeyARN, Region: b.Region}
	if s3 != nil {
		// The local S3 server: media's bucket with Media, and the
		// directory's (DIRECTORY_BUCKET).
		setup.S3Endpoint = s3.URL
		if o.Media {
			setup.MediaBucket = MediaBucket
		}
	}
	if table := o.Env["SESSION_TABLE"]; table != "" {
		setup.SessionTable, setup.DynamoDBEndpoint = table, os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	}
	po := setup.Options()
	po.BinDir, po.Built, po.Log = b.Dir, true, o.Log
	// One instance of each function, as the in-process relay is one: a
	// test's expectations of what one instance saw before (a pool's
	// connections across a database outage) hold.
	po.Count = map[string]int{}
	// But the push dialer, as Lambda scales it: an instance per try in
	// flight (started on demand).
	po.Count[emulator.PushDialerFunction] = emulator.DialerInstances
	if o.Push || o.PushSenderProcesses > 0 {
		po.Warm = map[string]int{emulator.PushDialerFunction: emulator.DialerWarm}
	}
	// Each function's process starts at its first invocation, as Lambda
	// starts an instance: a test runs only the functions it calls
	// (StartTest checks their cold-start lines at its end).
	po.OnDemand = true
	for k, v := range o.Env {
		po.Local[k] = v
	}
	if u := o.Env["BUZZ_PUBLIC_URL"]; u != "" {
		// As a stack deployed with -c domain: one public host, no
		// $connect authorizer.
		po.Settings.PublicURL, po.Settings.Hostnames = u, false
	}
	if o.WorkflowPrivateWebhooks {
		po.Local["WORKFLOW_ALLOW_PRIVATE_WEBHOOKS"] = "1"
	}
	if o.FanoutInlineMax > 0 {
		po.Local["FANOUT_INLINE_MAX"] = strconv.Itoa(o.FanoutInlineMax)
	}
	if o.FanoutBatchSize > 0 {
		po.Local["FANOUT_BATCH_SIZE"] = strconv.Itoa(o.FanoutBatchSize)
	}
	if os.Getenv("BUZZ_E2E_FUNCTION_LOGS") == "1" {
		po.Output = os.Stderr
	}
	r := &Relay{HTTPURL: "http://" + addr, WSURL: "ws://" + addr, DSN: dsn, errc: make(chan error, 1), s3: s3, s3dir: s3dir}
	if s3 != nil {
		r.S3URL = s3.URL
	}
	defer func() {
		if err != nil {
			ln.Close()
			if r.Functions != nil {
				r.Functions.Close()
			}
			if s3 != nil {
				_ = s3.Close()
			}
			if s3dir != "" {
				_ = os.RemoveAll(s3dir)
			}
		}
	}()
	if r.Functions, err = emulator.StartProcessStack(ctx, po); err != nil {
		return nil, fmt.Errorf("e2e: %w", err)
	}
	// The tests' handle: the same database, relay key and sealer.
	env := map[string]string{
		"DATABASE_URL": dsn, "BUZZ_PUBLIC_SCHEME": "http", "WS_MANAGEMENT_ENDPOINT": "http://" + addr,
		"RELAY_SIGNER": "kms", "RELAY_KMS_KEY_ID": b.KMSKeyARN, "AWS_REGION": b.Region,
		"RELAY_KEY_CIPHERTEXT": r.Functions.Migrated[provision.AttrRelayKeyCiphertext],
		"SESSION_TABLE":        o.Env["SESSION_TABLE"],
		// The directory the functions read, which the tests' changes to
		// communities rewrite as NIP-86 does.
		"DIRECTORY_BUCKET": o.Env["DIRECTORY_BUCKET"],
	}
	if s3 != nil {
		env["AWS_ENDPOINT_URL_S3"] = s3.URL
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("e2e: config: %w", err)
	}
	if r.App, err = app.Local(ctx, cfg, o.Log); err != nil {
		return nil, fmt.Errorf("e2e: build: %w", err)
	}
	if err := r.Functions.WaitColdStarts(ctx, time.Minute); err != nil {
		r.App.Store.Close()
		return nil, fmt.Errorf("e2e: %w", err)
	}
	ws := r.Functions.WS
	ws.IdleTimeout, ws.Lifetime = o.IdleTimeout, o.Lifetime
	r.WS, r.Lambda = ws, r.Functions.Lambda
	r.PushSender = r.Functions.Processes(emulator.PushSenderFunction)
	r.Runner, r.Stack = r.Functions.Processes(emulator.WorkflowRunnerFunction), r.Functions.Stack
	r.startLiveness(r.Functions.Stack, o)
	r.srv = &http.Server{Handler: r.Functions.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { r.errc <- r.srv.Serve(ln) }()
	return r, nil
}

// ForgetCommunities makes the relay see communities added since it last
// looked them up: in process at once; the functions' processes keep their
// own cache, which a community's TTL ends.
func (r *Relay) ForgetCommunities() {
	r.App.Communities.Forget()
	if r.Functions != nil {
		time.Sleep(community.DefaultTTL + 500*time.Millisecond)
	}
}
