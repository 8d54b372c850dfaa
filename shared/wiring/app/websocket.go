package app

import (
	"context"
	"encoding/json"

	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/wsrelay"
)

// WebSocket is the handler of the WebSocket routes ($connect, $default,
// $disconnect: the event says which) over the parts a has. Without a
// database ($connect) it only hands the connection to the push function;
// with one, $connect refuses a host that serves no community first;
// $default needs the write and read paths and live delivery (MessageParts
// builds them).
func (a *App) WebSocket() apigw.WebSocketHandler {
	if a.Store == nil {
		r := wsrelay.New(nil, nil, nil, nil, a.Log)
		r.Greeter = a.Greeter
		return apigw.WebSocket(r, a.origin())
	}
	var s wire.Sender
	if a.Fanout != nil {
		s = a.Fanout.Sender
	}
	r := wsrelay.New(a.Sessions, a.Core, s, a.Communities.ResolveID, a.Log)
	r.Admit = a.Communities.Admit
	if a.Directory != nil {
		r.Hosts, r.Admit = a.Directory.ResolveID, a.Directory.Admit
	}
	r.Sigs = a.Sigs
	r.Challenges = a.Challenges
	r.Greeter = a.Greeter
	return apigw.WebSocket(r, a.origin())
}

// FanoutBatch is functions/fanout's handler: it delivers one batch that
// ingest or ws-message handed over (shared/service/fanout, dispatch.go).
func (a *App) FanoutBatch() func(context.Context, json.RawMessage) error {
	fo := a.Fanout
	return func(ctx context.Context, payload json.RawMessage) error { return fo.DeliverBatch(ctx, payload) }
}
