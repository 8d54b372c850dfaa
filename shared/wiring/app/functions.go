package app

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

// One constructor per function kind: each reads the environment once and
// builds only what its handler uses.

// What each function kind builds.
const (
	ingestParts     = pool | keys | writes | liveIfSet | blobs
	queryParts      = pool | keys | reads | blobs
	connectParts    = part(0)
	messageParts    = pool | keys | writes | reads | live
	disconnectParts = pool
	fanoutParts     = pool | reads | live | splits
	localParts      = pool | keys | writes | reads | live | blobs
)

// start reads the environment, builds parts and returns the handler that
// handler makes of them.
func start[H any](ctx context.Context, log *slog.Logger, parts part, handler func(*App) H) (H, error) {
	a, err := fromEnv(ctx, log, parts)
	if err != nil {
		var none H
		return none, err
	}
	return handler(a), nil
}

// IngestFunction is functions/ingest: POST /events. It signs relay events
// (39000-39006) and, with WS_MANAGEMENT_ENDPOINT set, delivers what it
// stores live.
func IngestFunction(ctx context.Context, log *slog.Logger) (apigw.HTTPHandler, error) {
	return start(ctx, log, ingestParts, (*App).IngestHTTP)
}

// QueryFunction is functions/query: POST /query, POST /count, GET /
// (NIP-11), POST / (NIP-86) and GET /healthz. It builds the read side only:
// no write path; the relay keys sign the 39005/39006 overlays and NIP-86's
// addcommunity seals a new community's key.
func QueryFunction(ctx context.Context, log *slog.Logger) (apigw.HTTPHandler, error) {
	return start(ctx, log, queryParts, (*App).QueryHTTP)
}

// ConnectFunction is functions/ws-connect ($connect): built from the
// environment alone, no pool, no relay key, no AWS call; the first message
// registers the connection.
func ConnectFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	return start(ctx, log, connectParts, (*App).WebSocket)
}

// MessageFunction is functions/ws-message ($default): AUTH, EVENT, REQ,
// CLOSE, COUNT, with replies and live delivery posted to connections.
func MessageFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	return start(ctx, log, messageParts, (*App).WebSocket)
}

// DisconnectFunction is functions/ws-disconnect ($disconnect): the pool
// only; it forgets the connection and signs nothing.
func DisconnectFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	return start(ctx, log, disconnectParts, (*App).WebSocket)
}

// FanoutFunction is functions/fanout: it delivers one batch that ingest or
// ws-message handed over (shared/service/fanout, dispatch.go). It signs nothing.
func FanoutFunction(ctx context.Context, log *slog.Logger) (func(context.Context, json.RawMessage) error, error) {
	return start(ctx, log, fanoutParts, (*App).FanoutBatch)
}

// AuthorizeFunction is functions/ws-authorize built from the environment
// alone (BUZZ_HOST_HEADER): no pool, no key, no AWS call.
func AuthorizeFunction() (apigw.WebSocketAuthorizer, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	return apigw.Authorize((&App{Config: cfg}).origin()), nil
}
