package app

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/buzzrelay/relay/shared/apigw"
	"github.com/buzzrelay/relay/shared/config"
)

// One constructor per function kind: each reads the environment once and
// builds only what its handler uses.

// What each function kind builds.
const (
	ingestParts     = pool | keys | writes | liveIfSet
	queryParts      = pool | keys | reads
	connectParts    = part(0)
	messageParts    = pool | keys | writes | reads | live
	disconnectParts = pool
	fanoutParts     = pool | reads | live
	localParts      = pool | keys | writes | reads | live
)

// IngestFunction is functions/ingest: POST /events. It signs relay events
// (39000-39006) and, with WS_MANAGEMENT_ENDPOINT set, delivers what it
// stores live.
func IngestFunction(ctx context.Context, log *slog.Logger) (apigw.HTTPHandler, error) {
	a, err := fromEnv(ctx, log, ingestParts)
	if err != nil {
		return nil, err
	}
	return a.IngestHTTP(), nil
}

// QueryFunction is functions/query: POST /query, POST /count, GET /
// (NIP-11), POST / (NIP-86) and GET /healthz. It builds the read side only:
// no write path; the relay keys sign the 39005/39006 overlays and NIP-86's
// addcommunity seals a new community's key.
func QueryFunction(ctx context.Context, log *slog.Logger) (apigw.HTTPHandler, error) {
	a, err := fromEnv(ctx, log, queryParts)
	if err != nil {
		return nil, err
	}
	return a.QueryHTTP(), nil
}

// ConnectFunction is functions/ws-connect ($connect): built from the
// environment alone, no pool, no relay key, no AWS call; the first message
// registers the connection.
func ConnectFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	a, err := fromEnv(ctx, log, connectParts)
	if err != nil {
		return nil, err
	}
	return a.WebSocket(), nil
}

// MessageFunction is functions/ws-message ($default): AUTH, EVENT, REQ,
// CLOSE, COUNT, with replies and live delivery posted to connections.
func MessageFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	a, err := fromEnv(ctx, log, messageParts)
	if err != nil {
		return nil, err
	}
	return a.WebSocket(), nil
}

// DisconnectFunction is functions/ws-disconnect ($disconnect): the pool
// only; it forgets the connection and signs nothing.
func DisconnectFunction(ctx context.Context, log *slog.Logger) (apigw.WebSocketHandler, error) {
	a, err := fromEnv(ctx, log, disconnectParts)
	if err != nil {
		return nil, err
	}
	return a.WebSocket(), nil
}

// FanoutFunction is functions/fanout: it delivers one batch that ingest or
// ws-message handed over (shared/fanout, dispatch.go). It signs nothing.
func FanoutFunction(ctx context.Context, log *slog.Logger) (func(context.Context, json.RawMessage) error, error) {
	a, err := fromEnv(ctx, log, fanoutParts)
	if err != nil {
		return nil, err
	}
	return a.FanoutBatch(), nil
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
