// Package lambdas is the one description of the relay's functions: which
// exist (Functions), which API Gateway route reaches each (HTTPRoutes,
// MediaRoutes, WebSocketRoutes, the $connect authorizer), which are on no
// route (OffRoute), and the environment each one starts with
// (Environment). The CDK app (infra/) deploys from it and localdev's
// processes mode (BUZZ_LAMBDA=processes) runs each function's own binary
// from it, so the two cannot drift. No I/O, no AWS types.
package lambdas

import (
	"sort"
	"strings"
)

// Function describes one Lambda of the relay and what it may touch.
type Function struct {
	Name string // directory under functions/ and zip name under the asset dir
	// Needs the relay key: gets the KMS key configuration and kms:Decrypt
	// on the one key. ingest, query and ws-message sign 39000-39006 and
	// 44100/44101 and serve NIP-11 self; ws-message and ws-push key the
	// NIP-42 challenges with it; ws-connect and ws-disconnect are built
	// without a key (app.ConnectParts, app.DisconnectParts) and migrate
	// signs nothing.
	Signs bool
	// Posts to WebSocket connections (fan-out, replies): gets
	// WS_MANAGEMENT_ENDPOINT and execute-api:ManageConnections on the stage.
	Posts bool
	// Manages serves NIP-86 (POST /): its addcommunity seals a new
	// community's relay key, so it also gets kms:Encrypt (same condition).
	Manages bool
	// Authorizer is the $connect authorizer (functions/ws-authorize),
	// deployed only when the stack serves several hostnames (-c hostnames):
	// it hands the addressed host to every event of a connection.
	Authorizer bool
	// Migrate is the deploy-time function (the migrate custom resource's
	// handler): master secret, kms:Encrypt, never on a request path.
	Migrate bool
	// EgressCheck is the deploy-time EgressCheck custom resource's
	// handler: it opens TLS to every AWS endpoint the functions call, from
	// their subnets with their security group, before migrate runs and
	// before the stages serve (infra/egress.go). No grant beyond its VPC
	// network interfaces; never on a request path.
	EgressCheck bool
	// Sessions reads and writes the WebSocket sessions' DynamoDB table
	// (shared/aws/ddbsessions): ws-message (connections, AUTH, REQ,
	// CLOSE), ws-disconnect ($disconnect), the write paths that raise the
	// communities' last-commit marks (ws-message, ingest, query's NIP-86
	// writes), fan-out (the audience) and ws-push (the open connections).
	// Gets SESSION_TABLE.
	Sessions bool
	// Directory: reads and writes the directory of what each host serves
	// (shared/service/directory, DIRECTORY_BUCKET: the media bucket):
	// NIP-11 and NIP-86 on query, a new connection's host on ws-message.
	Directory bool
	// NoDB: the function never opens the database ($connect registers
	// nothing; the first message does), so it gets no database settings
	// and no grant.
	NoDB bool
	// Dispatches hands audiences above FANOUT_INLINE_MAX to the fan-out
	// function (asynchronous invoke): gets FANOUT_FUNCTION and
	// lambda:InvokeFunction on it. Built after the fan-out function.
	Dispatches bool
	// Fanout is the fan-out function itself: invoked asynchronously by the
	// dispatchers with a whole audience, it splits a large one and invokes
	// itself with the other parts (lambda:InvokeFunction on its own ARN),
	// loads the part it is given, re-checks access and posts.
	Fanout bool
	// Greets hands each accepted connection to the push function at
	// $connect (asynchronous invoke): gets PUSH_FUNCTION and
	// lambda:InvokeFunction on it. Built after the push function.
	Greets bool
	// Pushes is the push function (functions/ws-push): invoked by the
	// greeters with a connection, whose NIP-42 challenge it posts once the
	// socket is open, and by the liveness schedule (LivenessSchedule), for
	// a frame to every open connection.
	Pushes bool
	// Sweeps is the NIP-40 expiry sweep (functions/expiry-sweep): invoked
	// by an EventBridge Scheduler schedule every SweepRateHours, it
	// deletes the events whose expiration has passed. The database only.
	Sweeps bool
	// Vanishes takes NIP-62 requests to vanish without serving a media
	// route (ws-message): it gets the media bucket, to delete the objects
	// of the blobs a request removed (s3:DeleteObject only).
	Vanishes bool
	// LiveKit serves NIP-29 LiveKit's token endpoint (query) or its
	// webhook (ingest): with LiveKit on it reads the LiveKit secret at cold
	// start (LIVEKIT_SECRET_ARN, secretsmanager:GetSecretValue on it).
	LiveKit bool
	// GIFs serves Buzz's GIF proxy (POST /gifs/*, HTTPRoute.GIFs): with
	// GIFs on it reads the KLIPY key at cold start (KLIPY_SECRET_ARN,
	// secretsmanager:GetSecretValue on that one secret).
	GIFs bool
	// SendsPush is the push sender (functions/push-sender): invoked
	// asynchronously by the committing functions (PUSH_SENDER_FUNCTION)
	// with the ids of a commit in a community with push subscriptions,
	// it matches and POSTs NIP-9a callbacks and NIP-PL wakes; Lambda
	// retries a failed run and hands its event to an on-failure queue.
	SendsPush bool
	// Dials is the push dialer (functions/push-dialer): the push sender
	// invokes it synchronously with each try's request, which it makes.
	// It runs outside the VPC (OutsideVPC), so callbacks and the push
	// gateway are reached over IPv4 and IPv6 without a NAT; it gets no
	// database, key or secret and invokes nothing.
	Dials bool
	// RunsWorkflows is the workflow runner (functions/workflow-runner):
	// invoked asynchronously by the committing functions and the webhook
	// route (WORKFLOW_RUNNER_FUNCTION), and by its EventBridge Scheduler
	// schedules (one per schedule workflow, one-time ones for waits),
	// which it creates and deletes in its group (WORKFLOW_SCHEDULE_GROUP).
	RunsWorkflows bool
	Memory        float64 // MB
	Timeout       float64 // seconds
}

// The liveness schedule: every open connection gets a frame at least
// every LivenessGap while idle (the Buzz desktop app resets a connection
// silent for 60 s). A schedule cannot fire more often than once a minute,
// so the push function runs on a rate(LivenessRateMinutes) schedule and
// again LivenessDelaySeconds later, through a queue's delivery delay
// (infra/liveness.go; docs/architecture.md, "Greeting and liveness");
// localdev runs it on a timer of LivenessDelaySeconds.
const (
	LivenessRateMinutes  = 1
	LivenessDelaySeconds = 30
	LivenessGapSeconds   = 50
)

// SweepRateHours is how often the expiry sweep runs (infra/expiry.go;
// localdev runs it on a timer of the same period). It is the one schedule
// that reaches the database, so it is rare: each run may resume a paused
// Aurora (one resume a day, priced by localdev/cost/model). Reads never
// serve an expired event, so the sweep only gives the space back.
const SweepRateHours = 24

// Functions is every function the stack deploys. The HTTP API allows 30 s
// and the WebSocket API 29 s per integration; 28 s leaves room for an Aurora
// resume from 0 ACU (about 15 s) on the first request after a pause.
var Functions = []Function{
	{Name: "fanout", Fanout: true, Posts: true, Sessions: true, Memory: 512, Timeout: 60},
	{Name: "push-dialer", Dials: true, NoDB: true, Memory: 128, Timeout: 10}, // before push-sender, which names it
	{Name: "push-sender", SendsPush: true, Signs: true, Memory: 256, Timeout: 60},
	{Name: "workflow-runner", RunsWorkflows: true, Signs: true, Posts: true, Sessions: true, Memory: 256, Timeout: 330},
	{Name: "ws-push", Pushes: true, Signs: true, Posts: true, Sessions: true, NoDB: true, Memory: 128, Timeout: 30},
	{Name: "ingest", LiveKit: true, Signs: true, Posts: true, Dispatches: true, Sessions: true, Memory: 512, Timeout: 28},
	{Name: "query", Signs: true, Manages: true, LiveKit: true, GIFs: true, Sessions: true, Directory: true, Memory: 512, Timeout: 28},
	{Name: "ws-connect", NoDB: true, Greets: true, Memory: 256, Timeout: 28},
	{Name: "ws-authorize", NoDB: true, Authorizer: true, Memory: 128, Timeout: 10},
	{Name: "ws-message", Signs: true, Posts: true, Dispatches: true, Sessions: true, Directory: true, Vanishes: true, Memory: 512, Timeout: 28},
	{Name: "ws-disconnect", Sessions: true, Memory: 256, Timeout: 28},
	{Name: "migrate", Migrate: true, Memory: 256, Timeout: 300},
	{Name: "egresscheck", EgressCheck: true, NoDB: true, Memory: 128, Timeout: 120},
	{Name: "expiry-sweep", Sweeps: true, Memory: 256, Timeout: 300},
}

// DeployTime: CloudFormation runs the function (a custom resource's
// handler) during a deployment; it serves no route, so it has no reserved
// concurrency and waits for no migration.
func (f Function) DeployTime() bool { return f.Migrate || f.EgressCheck }

// OutsideVPC: the function is not attached to the VPC (Lambda's own
// network, with internet access): it needs nothing in the VPC. Every other
// function runs in the app subnets.
func (f Function) OutsideVPC() bool { return f.Dials }

// OffRoute is every function that no API Gateway route reaches, and who
// runs it instead. Every other function is on at least one route; a test
// (lambdas_test.go) holds the Makefile, functions/ and this package to it.
var OffRoute = map[string]string{
	"migrate":         "CloudFormation, as the migrate custom resource's onEvent handler, once before the routes serve",
	"fanout":          "ingest and ws-message (and itself), by asynchronous Invoke",
	"ws-push":         "ws-connect at every $connect (asynchronous Invoke: the greeting), and the liveness schedule (EventBridge every minute, and 30 s later through an SQS queue's delivery delay; localdev: a timer)",
	"egresscheck":     "CloudFormation, as the EgressCheck custom resource's handler (through CDK's Provider framework), before migrate and the stages",
	"push-sender":     "ingest and ws-message after a commit in a community with push subscriptions, by asynchronous Invoke (retried by Lambda, then its on-failure queue)",
	"push-dialer":     "push-sender, by synchronous Invoke (RequestResponse), once per try of a callback or wake",
	"expiry-sweep":    "an EventBridge Scheduler schedule once a day (NIP-40: deletes expired events; localdev: a timer)",
	"workflow-runner": "ingest and ws-message after a commit a workflow may act on, and the webhook route, by asynchronous Invoke; its EventBridge Scheduler schedules (localdev: the emulator's timers)",
}

// ByName is the function called name; ok is false when there is none.
func ByName(name string) (Function, bool) {
	for _, f := range Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Names is every function's name, sorted.
func Names() []string {
	out := make([]string, 0, len(Functions))
	for _, f := range Functions {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

// HTTPRoute is one HTTP API route and the function it reaches.
type HTTPRoute struct{ Function, Method, Path string }

// Key is the route's API Gateway route key, "METHOD /path".
func (r HTTPRoute) Key() string { return r.Method + " " + r.Path }

// GIFs: the route is Buzz's GIF proxy (POST /gifs/*), deployed in AWS
// only with a KLIPY secret (infra's -c gifs); locally it answers 404
// without a key.
func (r HTTPRoute) GIFs() bool { return strings.HasPrefix(r.Path, "/gifs/") }

// HTTPRoutes are the HTTP bridge's routes, always deployed (the GIF
// proxy's only with its key: HTTPRoute.GIFs).
var HTTPRoutes = []HTTPRoute{
	{"ingest", "POST", "/events"},
	{"query", "POST", "/query"},
	{"query", "POST", "/count"},
	{"query", "GET", "/"},
	{"query", "POST", "/"}, // NIP-86 relay management
	{"query", "GET", "/healthz"},
	// Buzz's invites (shared/transport/bridge invites.go): mint and claim
	// write; the join policy and the landing page read.
	{"ingest", "POST", "/api/invites"},
	{"ingest", "POST", "/api/invites/claim"},
	{"query", "POST", "/api/invites/accept-policy"},
	{"query", "GET", "/api/join-policy"},
	{"query", "GET", "/api/join-policy/terms"},
	{"query", "GET", "/api/join-policy/privacy"},
	{"query", "GET", "/invite/{code}"},
	{"query", "GET", "/info"},  // the NIP-11 document as JSON: the desktop's invite calls read it first
	{"query", "GET", "/admin"}, // the operator console (shared/transport/console)
	{"query", "GET", "/admin/{file}"},
	// NIP-29 LiveKit (shared/service/livekit): discovery and the token
	// endpoint read.
	{"query", "GET", "/.well-known/nip29/livekit"},
	{"query", "GET", "/.well-known/nip29/livekit/{group}"},
	{"query", "POST", "/.well-known/nip29/livekit/{group}"},
	{"ingest", "POST", "/livekit/webhook"}, // LiveKit's webhook: publishes 39004
	// Buzz's read-state API (shared/transport/bridge buzzv1.go): the
	// sidebar and read state, a key's own read marks written by POST.
	{"query", "GET", "/buzz/v1/me/sidebar"},
	{"query", "GET", "/buzz/v1/me/read-state"},
	{"query", "POST", "/buzz/v1/me/read-state"},
	// Buzz desktop's moderation pane and admin console (bridge
	// moderation.go, admin.go): NIP-86's use cases, on the function that
	// serves NIP-86.
	{"query", "POST", "/gifs/search"}, // Buzz's GIF proxy: 404 without a provider key
	{"query", "POST", "/gifs/share"},
	{"query", "GET", "/moderation/reports"},
	{"query", "GET", "/moderation/audit"},
	{"query", "GET", "/moderation/restricted"},
	{"query", "GET", "/api/admin/v1/probe"},
	{"query", "GET", "/api/admin/v1/reports"},
	{"query", "GET", "/api/admin/v1/reports/{id}"},
	{"query", "POST", "/api/admin/v1/reports/{id}/resolve"},
	{"query", "POST", "/api/admin/v1/reports/{id}/reopen"},
	{"query", "POST", "/api/admin/v1/reports/{id}/cancel"},
	{"query", "GET", "/api/admin/v1/feedback"},
	{"query", "GET", "/api/admin/v1/feedback/{id}"},
	{"query", "PATCH", "/api/admin/v1/feedback/{id}"},
	{"query", "GET", "/api/admin/v1/operators"},
	{"query", "PUT", "/api/admin/v1/operators/{pubkey}"},
	{"query", "DELETE", "/api/admin/v1/operators/{pubkey}"},
	{"query", "GET", "/api/admin/v1/members/restrictions"},
	{"query", "POST", "/api/admin/v1/members/{pubkey}/ban"},
	{"query", "DELETE", "/api/admin/v1/members/{pubkey}/ban"},
	{"query", "POST", "/api/admin/v1/members/{pubkey}/timeout"},
	{"query", "DELETE", "/api/admin/v1/members/{pubkey}/timeout"},
	{"query", "POST", "/api/admin/v1/events/{id}/delete"},
	// Buzz's workflows (shared/service/workflow): the webhook door writes
	// (a run), the runs and approvals read.
	{"ingest", "POST", "/hooks/{id}"},
	{"query", "GET", "/workflows/{id}/runs"},
	{"query", "GET", "/workflows/{id}/runs/{run}/approvals"},
}

// MediaRoutes are Blossom's (BUD-01/02/06) and Buzz's /media routes,
// deployed with media on: the writing routes to ingest, the reading ones
// to query.
var MediaRoutes = []HTTPRoute{
	{"ingest", "PUT", "/upload"},
	{"ingest", "HEAD", "/upload"},
	{"ingest", "DELETE", "/{blob}"},
	{"ingest", "PUT", "/media/upload"},
	{"ingest", "HEAD", "/media/upload"},
	{"ingest", "POST", "/media/upload"},
	{"ingest", "DELETE", "/media/{blob}"},
	{"query", "GET", "/{blob}"},
	{"query", "HEAD", "/{blob}"},
	{"query", "GET", "/list/{pubkey}"},
	{"query", "GET", "/media/{blob}"},
	{"query", "HEAD", "/media/{blob}"},
	// Buzz desktop's admin console's feedback attachment: the relay's
	// answer is a bridge.Stream the front streams from the bucket.
	{"query", "GET", "/api/admin/v1/feedback/{id}/attachments/{sha256}"},
}

// WebSocket route keys.
const (
	RouteConnect    = "$connect"
	RouteDefault    = "$default"
	RouteDisconnect = "$disconnect"
)

// WebSocketRoutes map each WebSocket route to its function. The $connect
// authorizer, when deployed, is the function with Authorizer set.
var WebSocketRoutes = map[string]string{
	RouteConnect:    "ws-connect",
	RouteDefault:    "ws-message",
	RouteDisconnect: "ws-disconnect",
}

// HoldsMedia: the function gets the media bucket, to serve media or to
// delete what a request to vanish removed (Vanishes).
func (f Function) HoldsMedia() bool { return f.ServesMedia() || f.Vanishes }

// ServesMedia: some media route reaches the function, so it gets the
// bucket and the limits in its environment (and, in infra/, its S3 grants).
func (f Function) ServesMedia() bool {
	for _, r := range MediaRoutes {
		if r.Function == f.Name {
			return true
		}
	}
	return false
}

// Deployed is the functions a stack deploys: all but the $connect
// authorizer unless it serves several hostnames.
func Deployed(hostnames bool) []Function {
	var out []Function
	for _, f := range Functions {
		if f.Authorizer && !hostnames {
			continue
		}
		out = append(out, f)
	}
	return out
}

// BuildFlags are the go build flags of every function's binary, as `make
// build` gives them (a test holds the Makefile to them); CGO is off.
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// MigrateResourceType is the CloudFormation type of the migrate custom
// resource; its attributes RelayKeyCiphertext and RelayPubkey come from
// the migrate function's Data (shared/wiring/provision).
const MigrateResourceType = "Custom::BuzzMigrate"

// PropOwner is the migrate custom resource's property naming the default
// community's first operator (shared/wiring/provision reads it).
const PropOwner = "Owner"

// MigrateProperties are the migrate custom resource's properties: a change
// to any makes CloudFormation send an Update, so migrate runs again (the
// zip's hash embeds the migrations). PropOwner is the default community's first operator, present only when
// one is named.
func MigrateProperties(s Settings, zipSHA256 string, refs Refs) map[string]any {
	props := map[string]any{
		"Community":        s.Community,
		"MigrateZipSha256": zipSHA256,
		"RelayKeyRevision": s.RelayKeyRevision,
		"RelayKmsKeyId":    refs(RefKMSKeyArn),
	}
	if s.Owner != "" {
		props[PropOwner] = s.Owner
	}
	return props
}
