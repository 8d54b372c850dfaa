// Command localdev runs the whole relay on one machine: it applies the
// migrations, builds the same handlers the Lambdas run, and serves them
// behind the API Gateway emulator on BUZZ_ADDR (default 127.0.0.1:8080).
// `make dev` starts it after localdev/pg.sh has provided DATABASE_URL.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/buzzrelay/relay/localdev/ddbttl"
	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/config"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

func main() {
	log := app.Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		app.Fatal(log, "localdev", err)
	}
}

func run(ctx context.Context) error {
	log := app.Logger()
	addr := envOr("BUZZ_ADDR", "127.0.0.1:8080")
	// One process serves every socket here, so the pool is bigger than a
	// Lambda's; the handlers post replies to the emulator's @connections API.
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "BUZZ_PUBLIC_SCHEME":
			return envOr(k, "http")
		case "DB_MAX_CONNS":
			return envOr(k, "16")
		case "WS_MANAGEMENT_ENDPOINT", "LAMBDA_ENDPOINT":
			return envOr(k, "http://"+addr)
		case "FANOUT_FUNCTION":
			return envOr(k, emulator.FanoutFunction)
		case "PUSH_FUNCTION":
			return envOr(k, emulator.PushFunction)
		case "PUSH_SENDER_FUNCTION":
			// Push notifications on, the sender in this process; callbacks
			// may reach this machine (docs/push.md).
			return envOr(k, emulator.PushSenderFunction)
		case "PUSH_ALLOW_PRIVATE_CALLBACKS":
			return envOr(k, "1")
		case "PUSH_DIALER_FUNCTION":
			// Each try's request through the dialer (its own function
			// outside the VPC in AWS), served by the emulator.
			return envOr(k, emulator.PushDialerFunction)
		case "WORKFLOW_RUNNER_FUNCTION":
			// Workflows on, the runner in this process (docs/workflows.md).
			return envOr(k, emulator.WorkflowRunnerFunction)
		}
		if v, ok := emulator.SchedulerEnv(addr)[k]; ok {
			// Its schedules and wakes at the emulator's Scheduler API.
			return envOr(k, v)
		}
		return os.Getenv(k)
	})
	if err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set: run `make dev`, which starts a local Postgres")
	}
	if err := expireLocalSessions(ctx, cfg, log); err != nil {
		return err
	}
	if os.Getenv("BUZZ_LAMBDA") == emulator.ProcessesMode {
		return runProcesses(ctx, addr, cfg)
	}
	m, err := migrate.Run(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	// The default community serves this machine's own names (BUZZ_ADDR's
	// host and the loopback names: a client on this machine reaches it as
	// localhost or 127.0.0.1 alike), or BUZZ_COMMUNITY_HOST; other hostnames
	// (names in /etc/hosts) are free for communities added with
	// `go run ./localdev/community add`, served at once.
	for _, h := range devHosts(addr, cfg.CommunityHost) {
		if err := migrate.EnsureCommunity(ctx, cfg.DatabaseURL, cfg.DefaultCommunity, h); err != nil {
			return err
		}
	}
	if err := cfg.RefreshDirectory(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	a, err := app.Local(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Store.Close()

	// The handlers' posts to @connections and Invokes of the fan-out
	// function stay in this process unless WS_MANAGEMENT_ENDPOINT names an
	// endpoint (localdev/roundtrips counts them through its proxy).
	newStack := emulator.NewInProcessStack
	if os.Getenv("WS_MANAGEMENT_ENDPOINT") != "" {
		newStack = emulator.NewStack
	}
	stack := newStack(a, log)
	ws := stack.WS
	// API Gateway's and Lambda's costs (APIGW_COSTS=on, APIGW_POST_LATENCY,
	// ...: localdev/emulator/costs.go); none unless asked for.
	costs, err := emulator.CostsFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	stack.Charge(costs)
	if n := fanoutProcesses(); n > 0 {
		// The fan-out function as processes of its own binary, niced
		// (BUZZ_FANOUT_NICE, default 19): as behind AWS, where it runs on
		// instances of its own, a publisher is served first.
		procs, err := emulator.StartProcesses(ctx, emulator.FanoutFunction, emulator.ProcessOptions{
			Env:   emulator.Environ(os.Environ(), map[string]string{"WS_MANAGEMENT_ENDPOINT": "http://" + addr, "DB_MAX_CONNS": "4"}),
			Count: n, Nice: fanoutNice(), Log: log, Output: os.Stderr})
		if err != nil {
			return err
		}
		defer procs.Close()
		stack.Lambda.Functions[emulator.FanoutFunction] = procs.Invoke
	}
	period, err := livenessPeriod()
	if err != nil {
		return err
	}
	stack.Liveness(ctx, period, log)
	sweep, err := sweepPeriod()
	if err != nil {
		return err
	}
	stack.ExpirySweep(ctx, sweep, log)
	stack.WorkflowSchedules(ctx, log)
	srv := &http.Server{Addr: addr, Handler: stack.Handler(), ReadHeaderTimeout: 10 * time.Second}
	if p := os.Getenv("BUZZ_PPROF_ADDR"); p != "" {
		// Profiling of this process (go tool pprof http://$BUZZ_PPROF_ADDR/debug/pprof/profile),
		// on its own address: never on the relay's.
		go func() { log.Warn("pprof stopped", "err", http.ListenAndServe(p, pprofMux())) }()
	}
	return serve(ctx, srv, ws, func() {
		fmt.Printf("Buzz relay (schema v%d) on http://%s  ws://%s\nrelay pubkey %s\n", m.Version, addr, addr, a.Signer.PublicKey())
		if a.Media != nil {
			// localdev/s3.sh (make dev) set MEDIA_BUCKET and AWS_ENDPOINT_URL_S3.
			fmt.Printf("media (Blossom) in bucket %s at %s\n", cfg.Media.Bucket, cfg.Media.Endpoint)
		}
		if cfg.Session.On() {
			// localdev/ddb.sh (make dev) set SESSION_TABLE: AUTH, CLOSE, a
			// limit-0 or resuming REQ and $disconnect need no database
			// statement.
			fmt.Printf("WebSocket sessions in DynamoDB table %s at %s\n", cfg.Session.Table, os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"))
		}
	})
}

// expireLocalSessions deletes the local sessions table's expired items
// every ddbttl.Every, as DynamoDB's TTL does behind AWS (dynalite never
// does), when the sessions live in the local DynamoDB (localdev/ddb.sh).
func expireLocalSessions(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if !cfg.Session.On() || !strings.HasPrefix(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), "http://127.0.0.1:") {
		return nil
	}
	c, err := ddbsessions.Client(ctx)
	if err != nil {
		return err
	}
	go ddbttl.Run(ctx, c, cfg.Session.Table, log)
	return nil
}

// serve runs srv until ctx ends (then closes ws's sockets and shuts srv
// down), printing banner once it listens.
func serve(ctx context.Context, srv *http.Server, ws *emulator.WebSocketAPI, banner func()) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	banner()
	select {
	case err := <-errc:
		return fmt.Errorf("listen on %s: %w", srv.Addr, err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ws.CloseAll() // hijacked sockets are not the server's to close
		return srv.Shutdown(shutdown)
	}
}

// runProcesses is BUZZ_LAMBDA=processes: every route reaches its
// function's own binary (built from functions/ for this machine, as make
// build builds them) through the Lambda Runtime API, with the environment
// the CDK stack gives it; migrate runs first, as the custom resource.
func runProcesses(ctx context.Context, addr string, cfg *config.Config) error {
	log := app.Logger()
	kms, key := os.Getenv("AWS_ENDPOINT_URL_KMS"), cfg.Key.KMSKeyID
	if kms == "" || key == "" {
		return errors.New("BUZZ_LAMBDA=processes needs local-kms (AWS_ENDPOINT_URL_KMS, RELAY_KMS_KEY_ID): run it through `make dev`, which sources localdev/kms.sh in this mode")
	}
	bin, err := filepath.Abs(filepath.Join(".localdev", "functions"))
	if err != nil {
		return err
	}
	o := emulator.LocalSetup{
		Addr: addr, DatabaseURL: cfg.DatabaseURL, KMSEndpoint: kms, KMSKeyARN: key, Region: envOr("AWS_REGION", "eu-west-2"),
		Community: cfg.DefaultCommunity, LogLevel: os.Getenv("LOG_LEVEL"),
		MediaBucket: cfg.Media.Bucket, S3Endpoint: cfg.Media.Endpoint,
		SessionTable: cfg.Session.Table, DynamoDBEndpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"),
	}.Options()
	o.BinDir, o.Output, o.Log = bin, os.Stderr, log
	o.Nice[emulator.FanoutFunction] = fanoutNice()
	ps, err := emulator.StartProcessStack(ctx, o)
	if err != nil {
		return err
	}
	defer ps.Close()
	for _, h := range devHosts(addr, cfg.CommunityHost) {
		if err := migrate.EnsureCommunity(ctx, cfg.DatabaseURL, cfg.DefaultCommunity, h); err != nil {
			return err
		}
	}
	if err := cfg.RefreshDirectory(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	if err := ps.WaitColdStarts(ctx, time.Minute); err != nil {
		return err
	}
	period, err := livenessPeriod()
	if err != nil {
		return err
	}
	ps.Liveness(ctx, period, log)
	sweep, err := sweepPeriod()
	if err != nil {
		return err
	}
	ps.ExpirySweep(ctx, sweep, log)
	srv := &http.Server{Addr: addr, Handler: ps.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return serve(ctx, srv, ps.WS, func() {
		fmt.Printf("Buzz relay (schema v%s, BUZZ_LAMBDA=processes) on http://%s  ws://%s\nrelay pubkey %s\n",
			ps.Migrated[provision.AttrVersion], addr, addr, ps.Migrated[provision.AttrRelayPubkey])
		fmt.Printf("functions: %d cold starts logged, each from its own binary in %s\n", len(ps.ColdStarts()), bin)
	})
}

// devHosts are the hostnames the default community claims: host when set
// (comma-separated), else addr's host and, when addr is a loopback name or
// a wildcard address, every loopback name (relayurl.LoopbackNames, and the
// machine's hostname for a wildcard), so a client on this machine is never
// sent a 404 for the name it happened to use.
func devHosts(addr, host string) []string {
	if host != "" {
		return strings.Split(host, ",")
	}
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		h = addr
	}
	ip := net.ParseIP(h)
	switch {
	case relayurl.Loopback(h):
		return relayurl.LoopbackNames()
	case h == "" || (ip != nil && ip.IsUnspecified()):
		out := relayurl.LoopbackNames()
		if name, err := os.Hostname(); err == nil && name != "" {
			out = append(out, name)
		}
		return out
	}
	return []string{h}
}

func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}

// livenessPeriod is how often make dev runs the push function's liveness
// tick, BUZZ_LIVENESS_PERIOD (a Go duration; default 30s, the spacing of
// the AWS schedule, lambdas.LivenessDelaySeconds; 0 turns it off).
func livenessPeriod() (time.Duration, error) {
	v := os.Getenv("BUZZ_LIVENESS_PERIOD")
	if v == "" {
		return lambdas.LivenessDelaySeconds * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("BUZZ_LIVENESS_PERIOD must be a Go duration (30s, 0 for none), got %q", v)
	}
	return d, nil
}

// sweepPeriod is how often make dev runs the NIP-40 expiry sweep,
// BUZZ_EXPIRY_SWEEP_PERIOD (a Go duration; default lambdas.SweepRateHours,
// the schedule's rate in AWS; 0 turns it off).
func sweepPeriod() (time.Duration, error) {
	v := os.Getenv("BUZZ_EXPIRY_SWEEP_PERIOD")
	if v == "" {
		return lambdas.SweepRateHours * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("BUZZ_EXPIRY_SWEEP_PERIOD must be a Go duration (24h, 0 for none), got %q", v)
	}
	return d, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// defaultFanoutProcesses is how many processes of functions/fanout make dev
// runs without BUZZ_FANOUT_PROCESSES: in the relay's own process, a large
// audience's posts would take turns with every publisher's messages (the
// publisher's OK p99 at 5,000 listeners: 542 ms in process, 18 ms with two
// processes; docs/benchmarks.md).
const defaultFanoutProcesses = 2

// fanoutNice is the fan-out processes' niceness, BUZZ_FANOUT_NICE
// (default 19).
func fanoutNice() int {
	if v, err := strconv.Atoi(os.Getenv("BUZZ_FANOUT_NICE")); err == nil {
		return v
	}
	return 19
}

// fanoutProcesses is BUZZ_FANOUT_PROCESSES (0: in process), else the default.
func fanoutProcesses() int {
	v, ok := os.LookupEnv("BUZZ_FANOUT_PROCESSES")
	if !ok || v == "" {
		return defaultFanoutProcesses
	}
	n, _ := strconv.Atoi(v)
	return n
}
