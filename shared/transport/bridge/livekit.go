package bridge

import (
	"context"
	"net/http"

	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/livekit"
)

// LiveKitDiscovery is GET /.well-known/nip29/livekit (nips 29.md): 204
// when this relay serves LiveKit rooms for the community at the Host,
// else 404.
func (b *Bridge) LiveKitDiscovery(ctx context.Context, r Request) Response {
	if !b.LiveKit.On() {
		return b.Fail(ctx, "livekit discovery", because(errNoRoute, livekit.ErrOff))
	}
	if _, err := b.Communities.Resolve(ctx, r.Host); err != nil {
		return b.Fail(ctx, "livekit discovery", unresolved(err))
	}
	return Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}

// LiveKitWebhook is POST /livekit/webhook, LiveKit's webhook:
// livekit.Service.Webhook (verified by its Authorization, no NIP-98).
func (b *Bridge) LiveKitWebhook(ctx context.Context, r Request) Response {
	if err := b.LiveKit.Webhook(ctx, r.Headers["authorization"], r.Body); err != nil {
		return b.Fail(ctx, "livekit webhook", err)
	}
	return Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}

// LiveKitToken is GET (or POST) /.well-known/nip29/livekit/<group-id>
// with a NIP-98 Authorization whose u is this URL: livekit.Service.Token,
// answered as LiveKit's token endpoint answers ({"server_url",
// "participant_token"}).
func (b *Bridge) LiveKitToken(ctx context.Context, r Request, group string) Response {
	if !b.LiveKit.On() {
		return b.Fail(ctx, "livekit token", livekit.ErrOff)
	}
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "livekit token", err)
	}
	g, err := b.LiveKit.Token(ctx, guard.Caller{Pubkey: pubkey, Size: len(r.Body)}, c.ID, group)
	if err != nil {
		return b.Fail(ctx, "livekit token", err)
	}
	resp := JSON(http.StatusOK, g)
	resp.Headers["cache-control"] = "no-store"
	return resp
}
