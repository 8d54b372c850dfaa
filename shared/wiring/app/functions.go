package app

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/buzzrelay/relay/shared/transport/apigw"
)

// What each function kind builds at cold start: a main passes its set to
// Build and starts the handler of its routes, so that it reads as its
// wiring (functions/*/main.go):
//
//	ingest         IngestParts      a.IngestHTTP()   apigw → routes (Write rows) → bridge/blossom → relay.Publish, media, invites
//	query          QueryParts       a.QueryHTTP()    apigw → routes (Read rows) → bridge/blossom → relay.Read/Count, manage, media
//	ws-connect     ConnectParts     a.WebSocket()    apigw → wsrelay (no database; hands the greeting to ws-push)
//	ws-message     MessageParts     a.WebSocket()    apigw → wsrelay → relay
//	ws-disconnect  DisconnectParts  a.WebSocket()    apigw → wsrelay → sessions
//	fanout         FanoutParts      a.FanoutBatch()  fanout.DeliverBatch
//	ws-authorize   AuthorizeParts   a.Authorizer()   apigw (the host only)
//	ws-push        PushParts        a.PushHandler()  wire.Pusher (greeting, liveness; no database)
//	push-sender    PushSenderParts  a.PushSender()   push.Service.Deliver (NIP-9a callbacks, NIP-PL wakes; each request through push-dialer)
//	push-dialer    PushDialerParts  a.PushDialer()   push.Direct (one request, outside the VPC; no database, no key)
//	expiry-sweep   SweepParts       a.SweepHandler() expiry.Sweeper (NIP-40; a schedule)
//	workflow-runner RunnerParts     a.WorkflowRunner() workflow.Service.Handle (runs, schedules, wakes)
const (
	// IngestParts: POST /events. It signs relay events (39000-39006) and,
	// with WS_MANAGEMENT_ENDPOINT set, delivers what it stores live.
	IngestParts = pool | keys | writes | liveIfSet | blobs | idle | avrooms
	// QueryParts: POST /query, POST /count, GET / (NIP-11), POST /
	// (NIP-86) and GET /healthz; the read side only, no write path. The
	// relay keys sign the 39005/39006 overlays and NIP-86's addcommunity
	// seals a new community's key; the sessions' idle state for NIP-86's
	// disablecommunity, which forgets the community's hosts there.
	QueryParts = pool | keys | reads | blobs | idle | avrooms
	// ConnectParts: $connect, from the environment alone (no pool, no
	// relay key): it hands each accepted connection to the push function
	// (PUSH_FUNCTION, one asynchronous Invoke); the first message
	// registers the connection.
	ConnectParts = greets
	// MessageParts: $default (AUTH, EVENT, REQ, CLOSE, COUNT), with
	// replies and live delivery posted to connections; with
	// SESSION_TABLE set, AUTH, CLOSE and a limit-0 REQ or one for what the
	// client has seen need no database statement (shared/service/sessions).
	MessageParts = pool | keys | writes | reads | live | idle | blobs
	// DisconnectParts: $disconnect: it forgets the connection (with
	// SESSION_TABLE set, in DynamoDB only: no database statement) and
	// signs nothing.
	DisconnectParts = pool | idle
	// FanoutParts: one batch that ingest or ws-message handed over
	// (shared/service/fanout, dispatch.go). It signs nothing.
	FanoutParts = pool | reads | live | splits
	// AuthorizeParts: the $connect authorizer, from the environment alone
	// (BUZZ_HOST_HEADER).
	AuthorizeParts = Parts(0)
	// PushParts: the push function: a connection's NIP-42 challenge
	// posted as soon as it opens, and the liveness frames a schedule asks
	// for, to the open connections of the sessions' table
	// (SESSION_TABLE). The relay key (only to key the challenges) and
	// @connections; no database.
	PushParts = pushes
	// PushSenderParts: the push sender, one batch of committed events
	// that ingest or ws-message handed over (shared/service/push): the
	// relay keys sign NIP-98 wakes and open executor keys.
	PushSenderParts = pool | keys | notifies
	// PushDialerParts: the push dialer, from the environment alone (no
	// pool, no key): the sender's requests, made outside the VPC.
	PushDialerParts = Parts(0)
	// SweepParts: the NIP-40 expiry sweep a schedule invokes; the pool
	// only.
	SweepParts = pool | sweeps
	// RunnerParts: the workflow runner (shared/service/workflow): the
	// relay keys sign what a run posts, live delivery posts it, and the
	// runner keeps the schedules and wakes.
	RunnerParts = pool | keys | reads | live | idle | runs
	localParts  = pool | keys | writes | reads | live | blobs | idle | greets | pushes | sweeps | notifies | avrooms | runs
)

// SweepHandler is functions/expiry-sweep's handler: one sweep of the
// expired events, whatever the schedule's payload.
func (a *App) SweepHandler() func(context.Context, json.RawMessage) error {
	s := a.Sweep
	return func(ctx context.Context, _ json.RawMessage) error {
		_, err := s.Sweep(ctx)
		return err
	}
}

// Build reads the environment once and builds parts: a main's cold start.
func Build(ctx context.Context, log *slog.Logger, parts Parts) (*App, error) {
	return fromEnv(ctx, log, parts)
}

// Authorizer is functions/ws-authorize's handler: it records the host the
// client addressed and allows every connection.
func (a *App) Authorizer() apigw.WebSocketAuthorizer { return apigw.Authorize(a.origin()) }
