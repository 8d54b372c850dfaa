package app

import (
	"context"
	"encoding/json"

	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/wsrelay"
)

// WebSocket is the handler of the WebSocket routes ($connect, $default,
// $disconnect: the event says which) over the parts a has. Without a
// database ($connect) it touches nothing; with one, $connect refuses a host
// that serves no community; $default needs the write and read paths and
// live delivery (MessageFunction builds them).
func (a *App) WebSocket() apigw.WebSocketHandler {
	if a.Store == nil {
		return apigw.WebSocket(wsrelay.New(nil, nil, nil, nil, nil, nil, a.Log), a.origin())
	}
	reg := fanout.NewRegistry(a.Store)
	var s fanout.Sender
	if a.Fanout != nil {
		reg, s = a.Fanout.Registry, a.Fanout.Sender
	}
	var rd wsrelay.Reader
	if a.Reader != nil {
		rd = a.Reader
	}
	r := wsrelay.New(reg, a.Ingest, rd, a.Fanout, s, a.Communities.ResolveID, a.Log)
	r.Admit = a.Communities.Admit
	r.Limiter = a.Limiter
	r.Sigs = a.Sigs
	return apigw.WebSocket(r, a.origin())
}

// FanoutBatch is functions/fanout's handler: it delivers one batch that
// ingest or ws-message handed over (shared/service/fanout, dispatch.go).
func (a *App) FanoutBatch() func(context.Context, json.RawMessage) error {
	fo := a.Fanout
	return func(ctx context.Context, payload json.RawMessage) error { return fo.DeliverBatch(ctx, payload) }
}
