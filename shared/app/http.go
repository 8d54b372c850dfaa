package app

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/buzzrelay/relay/shared/apigw"
	"github.com/buzzrelay/relay/shared/bridge"
	"github.com/buzzrelay/relay/shared/nip86"
)

// HTTPHandler is the API Gateway HTTP API handler type a function starts.
type HTTPHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// IngestHTTP is functions/ingest: POST /events, with live fan-out when
// fo is not nil.
func (a *App) IngestHTTP(fo bridge.Fanout) HTTPHandler {
	b := bridge.New(a.Store, a.Signer, a.Ingest, nil, fo, a.Config.DefaultCommunity, a.Log)
	b.Limiter = a.Limiter
	b.Communities = a.Communities
	return apigw.HTTP(b, a.origin())
}

// QueryHTTP is functions/query: POST /query, POST /count, GET / (NIP-11),
// POST / (NIP-86 management) and GET /healthz.
func (a *App) QueryHTTP(rd bridge.Reader) HTTPHandler {
	b := bridge.New(a.Store, a.Signer, nil, rd, nil, a.Config.DefaultCommunity, a.Log)
	b.Limiter = a.Limiter
	b.Communities = a.Communities
	b.Manage = &nip86.Service{Store: a.Store, Registry: a.Communities, Sealer: a.Sealer, Log: a.Log}
	return apigw.HTTP(b, a.origin())
}

// origin is how clients address the relay (BUZZ_PUBLIC_SCHEME / BUZZ_PUBLIC_URL).
func (a *App) origin() apigw.Origin {
	return apigw.Origin{Scheme: a.Config.PublicScheme, Host: a.Config.PublicHost, HostHeader: a.Config.HostHeader}
}
