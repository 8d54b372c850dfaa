package app

import (
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/routes"
)

// IngestHTTP is functions/ingest's handler: the route table's writing
// routes (POST /events, with live fan-out when a.Fanout is set).
func (a *App) IngestHTTP() apigw.HTTPHandler {
	return apigw.HTTP(a.routes(routes.Write, a.bridge()), a.origin())
}

// QueryHTTP is functions/query's handler: the route table's reading routes
// (POST /query, POST /count, GET / (NIP-11), POST / (NIP-86 management),
// GET /healthz, ...).
func (a *App) QueryHTTP() apigw.HTTPHandler {
	b := a.bridge()
	b.Manager = &manage.Service{Store: a.Store, Registry: a.Communities, Sealer: a.Sealer, Log: a.Log, Guard: a.Guard, Invites: a.Invites}
	if a.Directory != nil {
		b.Manager.Directory = a.Directory
	}
	if a.Media != nil {
		b.Manager.Blobs = a.Media
	}
	return apigw.HTTP(a.routes(routes.Read, b), a.origin())
}

// routes is the route table's server of side over b (and the media
// routes' codec when media is on).
func (a *App) routes(side routes.Side, b *bridge.Bridge) *routes.Server {
	return &routes.Server{Bridge: b, Media: a.mediaCodec(b), Side: side}
}

// bridge is the HTTP codec over a's use cases.
func (a *App) bridge() *bridge.Bridge {
	var limits *ratelimit.Limiter
	if a.Guard != nil {
		limits = a.Guard.Limiter
	}
	b := &bridge.Bridge{Database: a.Store, Core: a.Core, Signer: a.Signer, Log: a.Log, Limits: limits,
		Verifier:    &nip98.Verifier{Replay: a.Store, Sigs: a.Sigs},
		Communities: a.Communities, Invites: a.Invites, MediaInfo: a.mediaInfo(), LiveKit: a.LiveKit, Guard: a.Guard, GIFs: a.GIFs}
	if a.Directory != nil {
		b.Directory = a.Directory.Resolve
	}
	if a.Sessions != nil { // the open connections are the session store's to count
		b.Connections = a.Sessions
	}
	if a.Notify != nil {
		b.Push = a.pushInfo
	}
	if a.Workflows != nil {
		b.Workflows = a.Workflows
	}
	return b
}
