package app

import (
	"github.com/buzzrelay/relay/shared/transport/apigw"
	"github.com/buzzrelay/relay/shared/transport/blossom"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/nip86"
)

// IngestHTTP is functions/ingest's handler: POST /events, with live fan-out
// when a.Fanout is set.
func (a *App) IngestHTTP() apigw.HTTPHandler {
	b := a.bridge()
	b.Reads = false
	a.attachMedia(b, blossom.Write)
	return apigw.HTTP(b, a.origin())
}

// QueryHTTP is functions/query's handler: POST /query, POST /count, GET /
// (NIP-11), POST / (NIP-86 management) and GET /healthz.
func (a *App) QueryHTTP() apigw.HTTPHandler {
	b := a.bridge()
	b.Writes = false
	b.Manage = &nip86.Service{Store: a.Store, Registry: a.Communities, Sealer: a.Sealer, Log: a.Log, Guard: a.Guard, Invites: a.Invites}
	if a.Directory != nil {
		b.Manage.Directory = a.Directory
	}
	a.attachMedia(b, blossom.Read)
	if a.Media != nil {
		b.Manage.Blobs = a.Media
	}
	return apigw.HTTP(b, a.origin())
}

// bridge is the HTTP codec over a's use cases.
func (a *App) bridge() *bridge.Bridge {
	b := bridge.New(a.Store, a.Signer, a.Core, a.Config.DefaultCommunity, a.Log)
	b.Verifier.Sigs = a.Sigs
	b.Communities = a.Communities
	b.Invites = a.Invites
	if a.Directory != nil {
		b.Directory = a.Directory.Resolve
	}
	if a.Notify != nil {
		b.Push = a.pushInfo
	}
	return b
}
