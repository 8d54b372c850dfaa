package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/query"
)

// Buzz's private read-state API (/buzz/v1/me/sidebar, /buzz/v1/me/read-state),
// over relay.Sidebar, relay.ReadStateContexts and relay.ReadStateWrite: NIP-98
// on every request (the token binds the URL with its query string, and a
// POST's body), answers and errors as Buzz's relay gives them: every answer
// Cache-Control: private, no-store; errors {"error":{"code","request_id"}}
// (V1Fail).

// v1Codes are Buzz's error codes by status.
var v1Codes = map[int]string{
	http.StatusBadRequest:      "invalid_request",
	http.StatusUnauthorized:    "unauthorized",
	http.StatusForbidden:       "forbidden",
	http.StatusNotFound:        "not_found",
	http.StatusTooManyRequests: "rate_limited",
}

// V1Fail is the /buzz/v1 routes' error table: bridge.Fail's status and
// Retry-After, Buzz's body ({"error":{"code","request_id","message"}}).
func (b *Bridge) V1Fail(ctx context.Context, op string, err error) Response {
	r := b.Fail(ctx, op, err)
	var msg struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &msg)
	code, ok := v1Codes[r.Status]
	if !ok {
		code = "unavailable"
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	body, _ := marshal(map[string]map[string]string{"error": {"code": code, "request_id": hex.EncodeToString(id), "message": msg.Error}})
	r.Body = body
	r.Headers["cache-control"] = "private, no-store"
	return r
}

// v1OK is a /buzz/v1 answer.
func v1OK(v any) Response {
	r := JSON(http.StatusOK, v)
	r.Headers["cache-control"] = "private, no-store"
	return r
}

// Sidebar is GET /buzz/v1/me/sidebar: relay.Sidebar.
func (b *Bridge) Sidebar(ctx context.Context, r Request) Response {
	caller, err := b.authenticate(ctx, r)
	if err != nil {
		return b.V1Fail(ctx, "sidebar", err)
	}
	q, err := query.ParseSidebarQuery(r.Query)
	if err != nil {
		return b.V1Fail(ctx, "sidebar", err)
	}
	page, err := b.Core.Sidebar(ctx, caller, q)
	if err != nil {
		return b.V1Fail(ctx, "sidebar", err)
	}
	return v1OK(page)
}

// ReadStateWrite is POST /buzz/v1/me/read-state: relay.ReadStateWrite.
func (b *Bridge) ReadStateWrite(ctx context.Context, r Request) Response {
	if len(r.Body) > relayinfo.BuzzV1MaxWriteBody {
		return b.V1Fail(ctx, "read-state", query.ErrInvalid("the body is larger than 64 KiB"))
	}
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	intents, err := query.ParseIntents(r.Body)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	res, err := b.Core.ReadStateWrite(ctx, callerOf(c, pubkey, r), intents, true)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	return v1OK(res)
}

// ReadStateContexts is GET /buzz/v1/me/read-state:
// relay.ReadStateContexts.
func (b *Bridge) ReadStateContexts(ctx context.Context, r Request) Response {
	if len(r.Path)+len(r.RawQuery)+1 > relayinfo.BuzzV1MaxContextURL {
		return b.V1Fail(ctx, "read-state", query.ErrInvalid("the URL is longer than 16000 bytes"))
	}
	caller, err := b.authenticate(ctx, r)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	cs, err := query.ParseContexts(r.Query, true)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	page, err := b.Core.ReadStateContexts(ctx, caller, cs)
	if err != nil {
		return b.V1Fail(ctx, "read-state", err)
	}
	return v1OK(page)
}
