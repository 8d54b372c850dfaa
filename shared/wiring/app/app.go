// Package app builds, once per cold start, what one function kind needs and
// nothing more (functions.go), and the handlers it starts (http.go,
// websocket.go). localdev builds every part in one App (Local).
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/lambdainvoke"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/directory"
	"github.com/buzzrelay/relay/shared/service/expiry"
	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/service/gifs"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/livekit"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/service/negentropy"
	"github.com/buzzrelay/relay/shared/service/push"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/service/workflow"
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/wsrelay"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// App is the wired core of one function kind: the parts it does not use
// are nil.
type App struct {
	Config *config.Config
	Log    *slog.Logger
	// Store, Communities and Limiter: the pool (lazy), Host → community,
	// the rate limits (RATE_*). Nil on a function without a database.
	Store       *store.Store
	Communities *community.Registry
	// Directory is what each host serves, kept in the bucket
	// (DIRECTORY_BUCKET, else MEDIA_BUCKET): NIP-11 and
	// a new WebSocket connection's host read it, not the database; every
	// change of a community made here rewrites it. Nil: no bucket.
	Directory *directory.Directory
	Limiter   *ratelimit.Limiter
	// Guard is the door every request passes over them
	// (shared/service/guard): publish, reads, media, NIP-86, live
	// delivery's readers.
	Guard *guard.Guard
	// Keys is every community's relay key and Signer is Keys; Sealer opens
	// and seals community keys (nil: only the configured key). Nil on a
	// function that signs nothing.
	Keys   *community.Keys
	Signer signer.Signer
	Sealer community.Sealer
	// Ingest is the write path, Reader the read path (it signs the
	// 39005/39006 overlays with Keys), Fanout live delivery over the
	// @connections API; nil where the function does not use them.
	Ingest *ingest.Service
	// Invites is the invitation model (shared/service/invites), both doors.
	Invites *invites.Service
	// LiveKit is NIP-29 LiveKit's token endpoint (built with reads; off
	// without its settings).
	LiveKit *livekit.Service
	// GIFs is Buzz's GIF proxy (built with reads; off without a key).
	GIFs   *gifs.Service
	Reader *query.Engine
	Fanout *fanout.Fanout
	// Sessions are the WebSocket connections and subscriptions; Core is
	// the use cases over all of the above, which both transports call.
	Sessions *sessions.Registry
	Core     *relay.Relay
	// Sigs checks every client signature of this instance (events, AUTH,
	// NIP-98 tokens) and remembers the keys that sign often.
	Sigs *sigverify.Verifier
	// Media is the Blossom media service over the S3 bucket (MEDIA_BUCKET);
	// nil when media is off or the function serves none (media.go).
	Media *media.Service
	// Challenges derives the connections' NIP-42 challenges, keyed by the
	// relay key (push.go); the zero value where no function part needs
	// them.
	Challenges wire.Challenges
	// Greeter hands each accepted connection to the push function at
	// $connect (PUSH_FUNCTION); Push is that function's work, the greeting
	// and the liveness tick (push.go). Nil where not built.
	Greeter wsrelay.Invoker
	Push    *wire.Pusher
	// Notify is push notifications (NIP-9a, NIP-PL; notify.go): ingest's
	// rules for 30390/30350, the hand-off after each commit, NIP-11's
	// advertisement and the push sender's work. Nil when push is off
	// (PUSH_SENDER_FUNCTION unset) or the function needs none of it.
	Notify *push.Service
	// Sweep deletes expired events (NIP-40; functions/expiry-sweep); nil
	// where not built.
	Sweep *expiry.Sweeper
	// Workflows is Buzz's workflows (workflows.go): ingest's rules, the
	// hand-off after commits, the routes and the runner's work.
	Workflows *workflow.Service
}

// Parts are the pieces a function kind builds; each kind's set is named in
// functions.go.
type Parts uint16

const (
	pool   Parts = 1 << iota // Store, Communities, Limiter
	keys                     // Keys, Signer, Sealer
	writes                   // Ingest (with pool, keys)
	reads                    // Reader (with pool; signs when keys is built)
	live                     // Fanout (with pool, reads); WS_MANAGEMENT_ENDPOINT required
	// liveIfSet is live when WS_MANAGEMENT_ENDPOINT is set, else nothing
	// (with a warning): ingest without the endpoint delivers nothing live.
	liveIfSet
	// splits is the fan-out function's: without FANOUT_FUNCTION, the
	// other parts of an audience it splits go to itself
	// (AWS_LAMBDA_FUNCTION_NAME).
	splits
	// blobs is Media (with pool) when MEDIA_BUCKET is set.
	blobs
	// idle: the sessions' store (every function with the pool builds it).
	idle
	// greets is Greeter (no pool): ws-connect hands each connection to
	// the push function.
	greets
	// pushes is Push (no pool): the greeting and the liveness tick, with
	// the session store's registry of open connections (SESSION_TABLE).
	pushes
	// notifies is Notify (with pool) when PUSH_SENDER_FUNCTION is set:
	// the push sender's own part; writes and reads build it too.
	notifies
	// sweeps is Sweep (with pool): the NIP-40 expiry sweep.
	sweeps
	// avrooms is LiveKit (with pool): NIP-29 LiveKit's token endpoint,
	// which reads the LiveKit secret at cold start.
	avrooms
	// runs is the workflow runner's own part (with pool, keys, live):
	// schedules and wakes (workflows.go).
	runs
)

// noPool are the parts built without the database.
const noPool = greets | pushes

// Logger returns the JSON logger every entry point uses (LOG_LEVEL: debug,
// info, warn, error; default info).
func Logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToLower(os.Getenv("LOG_LEVEL")))); err != nil || os.Getenv("LOG_LEVEL") == "" {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Fatal logs err and exits; for main functions only.
func Fatal(log *slog.Logger, msg string, err error) {
	log.Error(msg, "err", err)
	os.Exit(1)
}

// Local wires every part from cfg, for localdev and the end-to-end tests:
// one process serves every function's handler.
func Local(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	return build(ctx, cfg, log, localParts)
}

// fromEnv reads the environment and builds parts.
func fromEnv(ctx context.Context, log *slog.Logger, parts Parts) (*App, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return build(ctx, cfg, log, parts)
}

// build wires parts from cfg. It fails on any misconfiguration; the pool
// connects lazily.
func build(ctx context.Context, cfg *config.Config, log *slog.Logger, parts Parts) (*App, error) {
	a := &App{Config: cfg, Log: log, Sigs: sigverify.New(sigverify.Options{})}
	if parts&liveIfSet != 0 {
		if cfg.WSManagementEndpoint != "" {
			parts |= live
		} else {
			log.Warn("WS_MANAGEMENT_ENDPOINT is not set: events posted over HTTP reach WebSocket subscribers only on their next REQ")
		}
	}
	if parts&^noPool != 0 {
		var err error
		if a.Store, err = cfg.Store(ctx); err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		if err := a.wire(ctx, parts); err != nil {
			a.Store.Close()
			return nil, err
		}
	}
	if err := a.wireNoPool(ctx, parts); err != nil {
		if a.Store != nil {
			a.Store.Close()
		}
		return nil, err
	}
	return a, nil
}

// wireNoPool builds the parts that need no database (push.go).
func (a *App) wireNoPool(ctx context.Context, parts Parts) error {
	if parts&greets != 0 {
		if err := a.openGreeter(ctx); err != nil {
			return err
		}
	}
	if parts&pushes != 0 {
		if err := a.openPush(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) wire(ctx context.Context, parts Parts) error {
	cfg := a.Config
	a.Communities = community.NewRegistry(a.Store, cfg.DefaultCommunity)
	if a.Sessions == nil && parts&(writes|reads|live|idle) != 0 {
		if err := a.openSessions(ctx); err != nil {
			return err
		}
	}
	a.Limiter = ratelimit.New(a.Store, cfg.Limits)
	if a.Sessions != nil {
		// The connections' message counters live with the sessions.
		a.Limiter = a.Limiter.WithMessages(a.Sessions)
	}
	a.Guard = &guard.Guard{Communities: a.Communities, Limiter: a.Limiter, Store: a.Store, Log: a.Log}
	if err := a.openDirectory(ctx); err != nil {
		return err
	}
	if parts&keys != 0 {
		sg, err := cfg.Signer(ctx)
		if err != nil {
			return fmt.Errorf("relay key: %w", err)
		}
		if a.Sealer, err = cfg.Sealer(ctx); err != nil {
			return err
		}
		a.Keys = community.NewKeys(a.Communities, a.Sealer, sg)
		a.Signer = a.Keys
		if a.Challenges, err = challenges(ctx, a.Keys); err != nil {
			return err
		}
	}
	if parts&blobs != 0 && cfg.Media.On() {
		if err := a.openMedia(ctx); err != nil {
			return err
		}
	}
	if parts&writes != 0 {
		a.Ingest = ingest.New(a.Store, a.Keys).WithSignatures(a.Sigs).WithClaimer(invites.Claimer{}).WithLiveKit(cfg.LiveKitConf.On())
		if a.Directory != nil { // a 9033's icon is NIP-11's
			a.Ingest = a.Ingest.WithDirectory(a.Directory)
		}
		// Each write raises the last-commit mark before its commit.
		a.Ingest = a.Ingest.WithMark(a.Sessions.RaiseMark)
	}
	if parts&(writes|reads|notifies) != 0 {
		if err := a.openNotify(ctx, parts); err != nil {
			return err
		}
	}
	if parts&(writes|reads|runs) != 0 {
		if err := a.openWorkflows(ctx, parts); err != nil {
			return err
		}
	}
	if parts&(reads|live) != 0 {
		a.Reader = query.New(a.Store, a.signer())
	}
	if parts&sweeps != 0 {
		a.Sweep = &expiry.Sweeper{Store: a.Store, Log: a.Log}
	}
	if parts&live != 0 {
		if err := a.connectLive(ctx, parts&splits != 0); err != nil {
			return err
		}
	}
	a.Invites = &invites.Service{Store: a.Store, Guard: a.Guard, Ingest: a.Ingest, Signer: a.signer()}
	if parts&avrooms != 0 {
		lkc, err := cfg.LiveKit(ctx)
		if err != nil {
			return err
		}
		a.LiveKit = &livekit.Service{Config: lkc, Guard: a.Guard, Seats: a.Store}
		if a.Ingest != nil {
			a.LiveKit.Presence = a.Ingest // the webhook publishes 39004
		}
		if a.Fanout != nil {
			a.LiveKit.Fanout = a.Fanout
		}
	}
	if a.Fanout != nil {
		a.Invites.Fanout = a.Fanout
	}
	if parts&reads != 0 {
		key, err := cfg.GIFKey(ctx)
		if err != nil {
			return err
		}
		if key != "" {
			if a.GIFs, err = gifs.New(key, cfg.GIFConf.Base, a.Guard, a.Log); err != nil {
				return err
			}
		}
	}
	a.Core = a.core()
	return nil
}

// core is the use cases over the parts built (an interface left nil where
// its part is).
func (a *App) core() *relay.Relay {
	c := &relay.Relay{Ingest: a.Ingest, Sessions: a.Sessions, Guard: a.Guard, Log: a.Log}
	if a.Keys != nil {
		c.Invites = a.Invites // a 28935 is relay-signed
	}
	if a.Reader != nil {
		c.Reader = a.Reader
		if a.Sessions != nil {
			c.Reconciler = negentropy.New(a.Reader, a.Sessions)
		}
	}
	if a.Fanout != nil {
		c.Fanout = a.Fanout
	}
	if a.Media != nil {
		c.Media = a.Media // a request to vanish deletes its blobs' objects
	}
	return c
}

// signer is Signer as an interface that is nil when no key was built.
func (a *App) signer() signer.Signer {
	if a.Keys == nil {
		return nil
	}
	return a.Keys
}

// connectLive builds live delivery over the @connections API at
// WS_MANAGEMENT_ENDPOINT and, with FANOUT_FUNCTION set, hands audiences
// above FANOUT_INLINE_MAX subscriptions to the fan-out function, invoked
// asynchronously at LAMBDA_ENDPOINT, which splits them in parts of about
// FANOUT_BATCH_SIZE (self: the function is that fan-out function, which
// falls back to its own name).
func (a *App) connectLive(ctx context.Context, self bool) error {
	endpoint := a.Config.WSManagementEndpoint
	if endpoint == "" {
		return errors.New("WS_MANAGEMENT_ENDPOINT is not set: live delivery needs the WebSocket API's @connections endpoint (https://{api-id}.execute-api.{region}.amazonaws.com/{stage})")
	}
	sdk, err := awssdk.Load(ctx, a.Config.AWSRegion, endpoint)
	if err != nil {
		return fmt.Errorf("fanout: %w", err)
	}
	// Idle connections for every post in flight: one instance's replies
	// and deliveries, or, in localdev, every emulated fan-out run at once
	// (a smaller pool closes and re-dials connections under load).
	mgmt := apigw.NewManagement(sdk, endpoint, 16*fanout.DefaultConcurrency)
	a.Fanout = fanout.New(a.Store, a.Sessions, mgmt, a.Reader, a.Log)
	a.Fanout.Door = a.Guard
	if a.Notify != nil && a.Notify.Sender != nil {
		a.Fanout.Push = a.Notify // one hand-off per commit, never matching
	}
	if a.Workflows != nil {
		if a.Workflows.Runner != nil {
			a.Fanout.Workflows = a.Workflows // one hand-off per commit, never matching
		}
		a.Workflows.Live = a.Fanout // what a run posts is delivered live
	}
	if a.Ingest != nil {
		// A commit loads what delivery of its events needs, in its round trip.
		a.Ingest = a.Ingest.WithDelivery(a.Fanout.Request)
	}
	f := a.Config.Fanout
	if f.Function == "" && self {
		f.Function = f.Self
	}
	if f.Function != "" {
		a.Fanout.InlineMax, a.Fanout.BatchSize = f.InlineMax, f.BatchSize
		a.Fanout.Async = lambdainvoke.New(sdk, f.LambdaEndpoint, f.Function, fanout.DefaultConcurrency)
	}
	return nil
}

// origin is how clients address the relay (BUZZ_PUBLIC_SCHEME / BUZZ_PUBLIC_URL).
func (a *App) origin() apigw.Origin {
	return apigw.Origin{Scheme: a.Config.PublicScheme, Host: a.Config.PublicHost, HostHeader: a.Config.HostHeader}
}
