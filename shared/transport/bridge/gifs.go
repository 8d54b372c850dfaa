package bridge

import (
	"context"
	"net/http"

	"github.com/buzzrelay/relay/shared/service/gifs"
)

// Buzz's GIF proxy (block/buzz crates/buzz-relay/src/api/gifs.rs): POST
// /gifs/search and POST /gifs/share, NIP-98 binding the JSON body, served
// only when a provider key is configured (else no route: 404, and NIP-11
// does not advertise it). gifs.Service answers them.

// GIFSearch is POST /gifs/search, body {"query", "customer_id",
// "locale"}: {"result": true, "data": ...}.
func (b *Bridge) GIFSearch(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.Fail(ctx, "gif search", err)
	}
	out, err := b.GIFs.Search(ctx, gifs.Caller{Community: c.ID, Pubkey: pubkey}, r.Body)
	if err != nil {
		return b.Fail(ctx, "gif search", err)
	}
	return Response{Status: http.StatusOK, Headers: map[string]string{"content-type": "application/json"}, Body: out}
}

// GIFShare is POST /gifs/share, body {"slug", "customer_id"}: 204.
func (b *Bridge) GIFShare(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.Fail(ctx, "gif share", err)
	}
	if err := b.GIFs.Share(ctx, gifs.Caller{Community: c.ID, Pubkey: pubkey}, r.Body); err != nil {
		return b.Fail(ctx, "gif share", err)
	}
	return Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}
