package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	domainpush "github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/wiring/app"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

// ProcessesMode is the value of BUZZ_LAMBDA that runs every route through
// its function's own binary (StartProcessStack).
const ProcessesMode = "processes"

// ProcessStackOptions say how StartProcessStack runs the functions.
type ProcessStackOptions struct {
	// Settings are the stack's choices (as infra/ reads them from CDK
	// context); Refs the local values of what a deployment names
	// (lambdas.Ref); RefRelayKeyCiphertext comes from migrate's answer.
	Settings lambdas.Settings
	Refs     map[lambdas.Ref]string
	// Local is what differs on one machine, set over every function's
	// environment: DATABASE_URL (the local Postgres, which config prefers
	// over DB_AUTH), BUZZ_PUBLIC_SCHEME=http, the local KMS, S3 and Lambda
	// endpoints, a region and credentials.
	Local map[string]string
	// BinDir receives the binaries ("" a temporary folder Close removes);
	// with Built they are there already (BuildFunctions).
	BinDir string
	Built  bool
	// Count is the processes (instances) per function, default 1; Nice
	// their niceness (the fan-out function's, as in make dev); Warm, with
	// OnDemand, how many of a function start at once all the same
	// (ProcessOptions.Warm).
	Count, Nice, Warm map[string]int
	// OnDemand starts each function's processes as its invocations need
	// them (ProcessOptions.OnDemand), as Lambda does; false starts every
	// function's Count at once (make dev, whose start-up checks every
	// binary's cold-start line).
	OnDemand bool
	Output   io.Writer // the functions' logs (nil: discarded)
	Log      *slog.Logger
}

// ColdStart is one cold-start line a function's process logged
// (app.ColdStart).
type ColdStart struct {
	Function   string `json:"function"`
	Executable string `json:"executable"`
	Main       string `json:"main"`
}

// ProcessStack is a Stack whose every route invokes its function's own
// binary through the Lambda Runtime API, each process with the environment
// the CDK stack gives that function (lambdas.Environment), after migrate
// ran once as CloudFormation runs the custom resource.
type ProcessStack struct {
	*Stack
	// Migrated is the migrate custom resource's Data (RelayPubkey,
	// RelayKeyCiphertext, Version).
	Migrated map[string]string
	BinDir   string
	Env      map[string]map[string]string // each function's environment
	// Reaches is which function each route reaches: HTTP route keys,
	// "$connect", "$default", "$disconnect", AuthorizerRoute, and
	// InvokeRoute+name for a function behind the Invoke API.
	Reaches map[string]string

	procs map[string]*Processes
	tmp   string

	mu    sync.Mutex
	colds []ColdStart
}

// PrebuiltEnv names the folder of functions already built for this machine
// (localdev/suites.sh builds them once for every suite of make test):
// BuildFunctions links them from there instead of building.
const PrebuiltEnv = "BUZZ_FUNCTIONS_BIN"

// BuildFunctions builds the named functions/* of the module in the current
// directory (or above) into dir, for this machine's platform with the
// flags `make build` uses (lambdas.BuildFlags), in one go build. With
// PrebuiltEnv set and holding every named function, it links them instead.
func BuildFunctions(ctx context.Context, dir string, names ...string) error {
	if linkPrebuilt(os.Getenv(PrebuiltEnv), dir, names) {
		return nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, lambdas.BuildFlags...), "-o", dir+string(filepath.Separator))
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("emulator: build functions %s: %w: %s", strings.Join(names, " "), err, b)
	}
	return nil
}

// linkPrebuilt puts each named function of the folder pre into dir (a hard
// link, else a copy) and reports whether all of them were there.
func linkPrebuilt(pre, dir string, names []string) bool {
	if pre == "" || len(names) == 0 {
		return false
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(pre, n)); err != nil {
			return false
		}
	}
	if filepath.Clean(pre) == filepath.Clean(dir) {
		return true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	for _, n := range names {
		src, dst := filepath.Join(pre, n), filepath.Join(dir, n)
		_ = os.Remove(dst)
		if os.Link(src, dst) == nil {
			continue
		}
		if copyExecutable(src, dst) != nil {
			return false
		}
	}
	return true
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// StartProcessStack builds every function, runs migrate once (a
// CloudFormation Create of the custom resource), then starts the processes
// of every deployed function but migrate behind the routes of
// shared/wiring/lambdas.
func StartProcessStack(ctx context.Context, o ProcessStackOptions) (_ *ProcessStack, err error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	p := &ProcessStack{procs: map[string]*Processes{}, BinDir: o.BinDir, Env: map[string]map[string]string{}}
	if p.BinDir == "" {
		if p.BinDir, err = os.MkdirTemp("", "buzz-functions-"); err != nil {
			return nil, fmt.Errorf("emulator: binaries: %w", err)
		}
		p.tmp = p.BinDir
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	deployed := lambdas.Deployed(o.Settings.Hostnames)
	names := make([]string, 0, len(deployed))
	for _, f := range deployed {
		names = append(names, f.Name)
	}
	if !o.Built {
		if err := BuildFunctions(ctx, p.BinDir, names...); err != nil {
			return nil, err
		}
	}
	refs := maps.Clone(o.Refs)
	resolve := func(r lambdas.Ref) string { return refs[r] }
	migrate, _ := lambdas.ByName("migrate")
	if p.Migrated, err = p.migrate(ctx, o, migrate, resolve); err != nil {
		return nil, err
	}
	refs[lambdas.RefRelayKeyCiphertext] = p.Migrated[provision.AttrRelayKeyCiphertext]
	for _, f := range deployed {
		if f.DeployTime() {
			// migrate ran above; the egress check has nothing to check
			// here (localdev/egresscheck checks @connections locally).
			continue
		}
		if _, err := p.start(ctx, o, f, resolve); err != nil {
			return nil, err
		}
	}
	p.Stack = p.routes(o.Settings.Media, o.Log)
	return p, nil
}

// migrate runs functions/migrate once with the custom resource's Create
// event (the Provider framework's onEvent shape) and returns its Data.
func (p *ProcessStack) migrate(ctx context.Context, o ProcessStackOptions, f lambdas.Function, refs lambdas.Refs) (map[string]string, error) {
	procs, err := p.start(ctx, o, f, refs)
	if err != nil {
		return nil, err
	}
	defer func() { procs.Close(); delete(p.procs, f.Name) }()
	ev := map[string]any{
		"RequestType":        "Create",
		"ResourceType":       lambdas.MigrateResourceType,
		"LogicalResourceId":  "Migrate",
		"RequestId":          requestID(),
		"StackId":            "arn:aws:cloudformation:us-east-1:000000000000:stack/localdev/" + requestID(),
		"ResourceProperties": lambdas.MigrateProperties(o.Settings, "localdev", refs),
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("emulator: migrate event: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(f.Timeout)*time.Second)
	defer cancel()
	out, err := procs.Call(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("emulator: the migrate custom resource failed: %w", err)
	}
	var resp provision.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("emulator: migrate answered %q: %w", out, err)
	}
	if resp.Data[provision.AttrRelayKeyCiphertext] == "" {
		return nil, fmt.Errorf("emulator: migrate answered no %s: %s", provision.AttrRelayKeyCiphertext, out)
	}
	return resp.Data, nil
}

// start runs f's processes with its environment.
func (p *ProcessStack) start(ctx context.Context, o ProcessStackOptions, f lambdas.Function, refs lambdas.Refs) (*Processes, error) {
	env := lambdas.Environment(f, o.Settings, refs)
	maps.Copy(env, o.Local)
	for _, k := range awssdk.ChargeVars {
		// The emulated AWS costs (APIGW_COSTS=on, ...) reach the
		// functions' own SDK clients and pools too.
		if v := os.Getenv(k); v != "" && env[k] == "" {
			env[k] = v
		}
	}
	p.Env[f.Name] = env
	procs, err := StartProcesses(ctx, f.Name, ProcessOptions{
		Binary:   filepath.Join(p.BinDir, f.Name),
		Env:      Environ(nil, env),
		Count:    max(1, o.Count[f.Name]),
		OnDemand: o.OnDemand || f.Dials,
		Warm:     o.Warm[f.Name],
		Nice:     o.Nice[f.Name],
		Output:   &coldStartTap{next: o.Output, seen: p.sawColdStart},
		Log:      o.Log,
	})
	if err != nil {
		return nil, err
	}
	p.procs[f.Name] = procs
	return procs, nil
}

// routes is the Stack over the processes: the HTTP API's routes, the
// WebSocket routes, the $connect authorizer when deployed, and the fan-out
// and push functions behind the Invoke API.
func (p *ProcessStack) routes(media bool, log *slog.Logger) *Stack {
	p.Reaches = map[string]string{}
	byFunction := map[string]HTTPHandler{}
	for name, procs := range p.procs {
		byFunction[name] = call[events.APIGatewayV2HTTPRequest, events.APIGatewayV2HTTPResponse](procs)
	}
	http := HTTPRoutes(byFunction, media)
	for _, rs := range [][]lambdas.HTTPRoute{lambdas.HTTPRoutes, lambdas.MediaRoutes} {
		for _, r := range rs {
			if http[r.Key()] != nil {
				p.Reaches[r.Key()] = r.Function
			}
		}
	}
	ws := &WebSocketAPI{Log: log}
	handler := func(route string) WebSocketHandler {
		name := lambdas.WebSocketRoutes[route]
		p.Reaches[route] = name
		return call[events.APIGatewayWebsocketProxyRequest, events.APIGatewayProxyResponse](p.procs[name])
	}
	ws.Connect, ws.Default, ws.Disconnect = handler(lambdas.RouteConnect), handler(lambdas.RouteDefault), handler(lambdas.RouteDisconnect)
	lambda := &LambdaAPI{Functions: map[string]AsyncHandler{}, Calls: map[string]CallHandler{}, Log: log}
	for _, f := range lambdas.Functions {
		procs := p.procs[f.Name]
		switch {
		case procs == nil:
		case f.Authorizer:
			ws.Authorizer = call[events.APIGatewayCustomAuthorizerRequestTypeRequest, events.APIGatewayCustomAuthorizerResponse](procs)
			p.Reaches[AuthorizerRoute] = f.Name
		case f.Fanout, f.Pushes, f.Sweeps, f.SendsPush, f.RunsWorkflows:
			lambda.Functions[f.Name] = procs.Invoke
			p.Reaches[InvokeRoute+f.Name] = f.Name
		case f.Dials:
			lambda.Calls[f.Name] = procs.Call
			p.Reaches[InvokeRoute+f.Name] = f.Name
		}
	}
	s := &Stack{HTTP: &HTTPAPI{Routes: http}, WS: ws, Lambda: lambda}
	if lambda.Functions[WorkflowRunnerFunction] != nil {
		// Its schedules and wakes, through the Scheduler API here
		// (LocalSetup's AWS_ENDPOINT_URL_SCHEDULER).
		s.Scheduler = &SchedulerAPI{Lambda: lambda, Log: log}
	}
	if media {
		s.DirectMax = blossom.Defaults.DirectMaxBytes // LocalSetup.Options' limit
	}
	return s
}

// Names of the non-HTTP entries of ProcessStack.Reaches.
const (
	AuthorizerRoute = "$connect authorizer"
	InvokeRoute     = "Invoke "
)

// call is a handler that invokes a function's processes with the event as
// JSON and decodes its answer, as API Gateway's Lambda integration does.
func call[In, Out any](procs *Processes) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		var out Out
		payload, err := json.Marshal(in)
		if err != nil {
			return out, fmt.Errorf("emulator: event of %s: %w", procs.name, err)
		}
		answer, err := procs.Call(ctx, payload)
		if err != nil {
			return out, err
		}
		if err := json.Unmarshal(answer, &out); err != nil {
			return out, fmt.Errorf("emulator: %s answered %.200q: %w", procs.name, answer, err)
		}
		return out, nil
	}
}

// ColdStarts are the cold-start lines the processes logged so far.
func (p *ProcessStack) ColdStarts() []ColdStart {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ColdStart(nil), p.colds...)
}

// CheckColdStarts says which of the running functions (and migrate) have
// not logged that they started from their own binary in BinDir, built
// from their own functions/ folder; nil when every one has. A function
// started on demand is running once its first invocation started it.
func (p *ProcessStack) CheckColdStarts() error {
	want := map[string]bool{"migrate": true}
	for name, procs := range p.procs {
		if procs.Started() > 0 {
			want[name] = true
		}
	}
	ok := map[string]bool{}
	for _, c := range p.ColdStarts() {
		if c.Executable == filepath.Join(p.BinDir, c.Function) && strings.HasSuffix(c.Main, "/functions/"+c.Function) {
			ok[c.Function] = true
		}
	}
	var missing []string
	for name := range want {
		if !ok[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("emulator: no cold-start line from its own binary in %s for %s", p.BinDir, strings.Join(missing, ", "))
	}
	return nil
}

func (p *ProcessStack) sawColdStart(c ColdStart) {
	p.mu.Lock()
	p.colds = append(p.colds, c)
	p.mu.Unlock()
}

// Processes are the running processes of the function called name (nil
// when it runs none): what a test kills to crash it (Processes.Crash).
func (p *ProcessStack) Processes(name string) *Processes { return p.procs[name] }

// Close stops every process and removes a temporary BinDir.
func (p *ProcessStack) Close() {
	for _, procs := range p.procs {
		procs.Close()
	}
	if p.Stack != nil {
		p.Lambda.Wait()
	}
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
	}
}

// coldStartTap passes whole log lines on and reports each cold-start line.
type coldStartTap struct {
	next io.Writer
	seen func(ColdStart)
}

func (t *coldStartTap) Write(line []byte) (int, error) {
	if bytes.Contains(line, []byte(`"msg":"`+app.ColdStartMessage+`"`)) {
		var c ColdStart
		if json.Unmarshal(line, &c) == nil {
			t.seen(c)
		}
	}
	return t.next.Write(line)
}

// moduleRoot is the folder of the relay's go.mod, from the current
// directory (or above).
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("emulator: find the module: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("emulator: not inside the relay's module: run from the repository")
	}
	return filepath.Dir(mod), nil
}

// LocalSetup is what a relay on one machine runs its functions with.
type LocalSetup struct {
	Addr        string // the stack's address (its @connections and Invoke APIs)
	DatabaseURL string
	// KMSEndpoint and KMSKeyARN are local-kms's address and the seeded
	// key (localdev/kms.sh); Region is the key's region.
	KMSEndpoint, KMSKeyARN, Region string
	Community, LogLevel            string // "" default, info
	// MediaBucket and S3Endpoint: the local S3 server, or "" for no media.
	MediaBucket, S3Endpoint string
	// SessionTable and DynamoDBEndpoint: the sessions' table in the local
	// DynamoDB (localdev/ddb.sh).
	SessionTable, DynamoDBEndpoint string
}

// LocalCounts are the processes per function on one machine: two of each
// busy request path, so a slow invocation does not hold up every other.
var LocalCounts = map[string]int{"ingest": 2, "query": 2, "ws-message": 2, "ws-push": 2, PushDialerFunction: DialerInstances}

// DialerInstances bounds the push dialer's processes: one per try a
// sender has in flight (push.SendConcurrency), as Lambda scales the
// dialer out, so a slow callback host holds one instance, never the
// others' tries. They start on demand (ProcessStack.start), whatever
// ProcessStackOptions.OnDemand says.
const DialerInstances = domainpush.SendConcurrency

// DialerWarm is how many dialer processes a test relay with push starts
// at once (ProcessStackOptions.Warm): a burst of tries then finds them
// warm, as Lambda's instances start in parallel, where on one machine's
// two cores forty cold starts one after another take seconds (about
// 0.1 s of CPU each) and would delay the burst's every try. It covers the
// largest burst a test sends (41 tries, pushslow_test.go).
const DialerWarm = 48

// Options are the ProcessStackOptions of l: the stack's settings as a
// deployment serving several hostnames (so the $connect authorizer runs
// too) with the secret database login and NAT egress (no per-service
// endpoints: Local names the local ones), and the local values.
func (l LocalSetup) Options() ProcessStackOptions {
	community, level := l.Community, l.LogLevel
	if community == "" {
		community = "default"
	}
	if level == "" {
		level = "info"
	}
	lim := blossom.Defaults
	o := ProcessStackOptions{
		Settings: lambdas.Settings{
			Community: community, LogLevel: level, DBAuth: "secret", Egress: "nat-gateway",
			RelayKeyRevision: "1", Hostnames: true, Media: l.MediaBucket != "",
			MediaLimits: lambdas.MediaLimits{
				MaxBytes: lim.MaxBytes, DirectMaxBytes: lim.DirectMaxBytes, KeyBytesPerDay: lim.KeyBytesPerDay,
				CommunityBytesStored: lim.CommunityBytesStored, PresignTTL: lim.PresignTTL.String(),
			},
		},
		Refs: map[lambdas.Ref]string{
			lambdas.RefRegion:                   l.Region,
			lambdas.RefDBSecretArn:              "arn:aws:secretsmanager:" + l.Region + ":000000000000:secret:localdev-unused",
			lambdas.RefKMSKeyArn:                l.KMSKeyARN,
			lambdas.RefWSManagementEndpoint:     "http://" + l.Addr,
			lambdas.RefFanoutFunction:           FanoutFunction,
			lambdas.RefPushFunction:             PushFunction,
			lambdas.RefPushSenderFunction:       PushSenderFunction,
			lambdas.RefPushDialerFunction:       PushDialerFunction,
			lambdas.RefWorkflowRunnerFunction:   WorkflowRunnerFunction,
			lambdas.RefWorkflowScheduleGroup:    ScheduleGroup,
			lambdas.RefWorkflowSchedulerRoleArn: SchedulerRoleArn,
			lambdas.RefMediaBucket:              l.MediaBucket,
			lambdas.RefSessionTable:             l.SessionTable,
		},
		Local: map[string]string{
			"DATABASE_URL":              l.DatabaseURL,
			"BUZZ_PUBLIC_SCHEME":        "http",
			"LAMBDA_ENDPOINT":           "http://" + l.Addr,
			"AWS_ENDPOINT_URL_KMS":      l.KMSEndpoint,
			"AWS_ENDPOINT_URL_S3":       l.S3Endpoint,
			"AWS_ENDPOINT_URL_DYNAMODB": l.DynamoDBEndpoint,
			// The runner's schedules (workflows.go).
			"AWS_ENDPOINT_URL_SCHEDULER": "http://" + l.Addr,
			"AWS_REGION":                 l.Region,
			"AWS_ACCESS_KEY_ID":          "local",
			"AWS_SECRET_ACCESS_KEY":      "local",
			// Callbacks and wakes may reach this machine (docs/push.md).
			"PUSH_ALLOW_PRIVATE_CALLBACKS": "1",
		},
		Count: maps.Clone(LocalCounts),
		Nice:  map[string]int{},
	}
	return o
}

// WaitColdStarts waits until CheckColdStarts passes, or timeout.
func (p *ProcessStack) WaitColdStarts(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := p.CheckColdStarts()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
