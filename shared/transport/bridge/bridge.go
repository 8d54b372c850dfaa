// Package bridge is Buzz's HTTP bridge, free of any AWS type: POST /events,
// POST /query, POST /count (all NIP-98 authenticated), the NIP-11 document
// on GET / and GET /healthz. The apigw package adapts API Gateway events to
// Request and Response; localdev calls it through the same adapter.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/transport/nip86"
)

// Request is one HTTP request as the bridge needs it. Header names are
// lowercase.
type Request struct {
	Method string
	Scheme string // http or https, as the client addressed the relay
	Host   string
	Path   string
	// Query is the query string's parameters (the first value of each).
	Query map[string]string
	// RawQuery is the query string as sent, without the "?" (NIP-98 u).
	RawQuery string
	Headers  map[string]string
	Body     []byte
}

// URL is the request URL as the client addressed it, query string
// included: what a NIP-98 token's u tag must name.
func (r Request) URL() string {
	u := r.Scheme + "://" + r.Host + r.Path
	if r.RawQuery != "" {
		u += "?" + r.RawQuery
	}
	return u
}

// Response is what the bridge answers.
type Response struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// Reader answers /query and /count (implemented by shared/service/query).
type Reader interface {
	Query(ctx context.Context, community, reader string, body []byte) ([]json.RawMessage, error)
	Count(ctx context.Context, community, reader string, body []byte) (int64, error)
}

// ReadStateReader answers NIP-RS read_state_snapshot bodies on /query
// (shared/service/query).
type ReadStateReader interface {
	ReadStateSnapshot(ctx context.Context, community, reader string, body []byte) (*query.ReadStateSnapshot, error)
}

// Fanout delivers committed events to live subscribers (shared/service/fanout).
type Fanout interface {
	Deliver(ctx context.Context, community string, events []*nostr.Event, at *store.Delivery)
}

// Bridge serves the HTTP routes.
type Bridge struct {
	Store    *store.Store
	Ingest   *ingest.Service // nil on a function that takes no writes
	Reader   Reader          // nil on a function that serves no reads
	Fanout   Fanout          // nil: no live delivery from this function
	Signer   signer.Signer
	Verifier *nip98.Verifier
	Log      *slog.Logger
	// Manage serves NIP-86 (POST / with application/nostr+json+rpc); nil:
	// not on this function.
	Manage *nip86.Service
	// Communities maps a request's Host to its community.
	Communities *community.Registry
	// Limiter bounds each key's events and reads; nil: no limits.
	Limiter *ratelimit.Limiter
}

// New wires a bridge; ing, rd and fo may be nil.
func New(st *store.Store, sg signer.Signer, ing *ingest.Service, rd Reader, fo Fanout, defaultCommunity string, log *slog.Logger) *Bridge {
	return &Bridge{
		Store: st, Ingest: ing, Reader: rd, Fanout: fo, Signer: sg, Log: log,
		Verifier:    &nip98.Verifier{Replay: st},
		Communities: community.NewRegistry(st, defaultCommunity),
	}
}

// Serve routes one request.
func (b *Bridge) Serve(ctx context.Context, r Request) Response {
	path := strings.TrimRight(r.Path, "/")
	if r.Method == http.MethodOptions {
		return Response{Status: http.StatusNoContent, Headers: cors(nil)}
	}
	switch {
	case path == "" && r.Method == http.MethodGet:
		return b.info(ctx, r)
	case path == "" && r.Method == http.MethodPost && b.Manage != nil &&
		strings.HasPrefix(r.Headers["content-type"], nip86.ContentType):
		return b.manage(ctx, r)
	case path == "/healthz" && r.Method == http.MethodGet:
		return b.health(ctx, r)
	case path == "/events" && r.Method == http.MethodPost && b.Ingest != nil:
		return b.events(ctx, r)
	case (path == "/query" || path == "/count") && r.Method == http.MethodPost && b.Reader != nil:
		return b.read(ctx, r, path == "/count")
	}
	return errorJSON(http.StatusNotFound, "invalid: no route for "+r.Method+" "+r.Path)
}

// authenticate resolves the community and verifies the NIP-98 token
// against that community's replay table.
func (b *Bridge) authenticate(ctx context.Context, r Request) (community, pubkey string, resp *Response) {
	c, pubkey, resp := b.authenticateAs(ctx, r, false)
	if resp != nil {
		return "", "", resp
	}
	return c.ID, pubkey, nil
}

// authenticateAs is authenticate; payload requires the token to bind the
// body (NIP-86).
func (b *Bridge) authenticateAs(ctx context.Context, r Request, payload bool) (c *community.Community, pubkey string, resp *Response) {
	if len(r.Body) > relayinfo.MaxHTTPBodyLength {
		e := errorJSON(http.StatusRequestEntityTooLarge, "invalid: request body is larger than 1 MiB")
		return nil, "", &e
	}
	if err := eventcheck.UTF8("request body", r.Body); err != nil {
		e := errorJSON(http.StatusBadRequest, err.Error())
		return nil, "", &e
	}
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		e := b.unresolved(ctx, err)
		return nil, "", &e
	}
	pubkey, err = b.Verifier.Verify(ctx, nip98.Request{
		Community:      c.ID,
		Authorization:  r.Headers["authorization"],
		Method:         r.Method,
		URL:            r.URL(),
		Body:           r.Body,
		RequirePayload: payload,
	})
	if err != nil {
		e := b.Fail(ctx, "nip98", err)
		return nil, "", &e
	}
	return c, pubkey, nil
}

// eventsResponse is the body of POST /events.
type eventsResponse struct {
	EventID  string `json:"event_id"`
	Accepted bool   `json:"accepted"`
	Message  string `json:"message"`
}

func (b *Bridge) events(ctx context.Context, r Request) Response {
	community, pubkey, fail := b.authenticate(ctx, r)
	if fail != nil {
		return *fail
	}
	var ev nostr.Event
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return errorJSON(http.StatusBadRequest, "invalid: body must be one JSON nostr event: "+err.Error())
	}
	if ev.PubKey != pubkey && !kinds.AnyAuthor(ev.Kind) {
		return errorJSON(http.StatusForbidden, "restricted: event pubkey is not the key that signed the NIP-98 token")
	}
	if err := b.Limiter.Check(ctx, ratelimit.Request{Community: community, Pubkey: pubkey,
		Event: true, EventBytes: len(r.Body), NewChannel: ev.Kind == kinds.CreateGroup}); err != nil {
		if resp, limited := b.limited(ctx, err); limited {
			return resp
		}
	}
	out, err := b.Ingest.Submit(ctx, community, pubkey, &ev)
	if err != nil {
		return b.Fail(ctx, "events", err)
	}
	if len(out.Committed) > 0 && b.Fanout != nil {
		b.Fanout.Deliver(ctx, community, out.Committed, out.Delivery)
	}
	return jsonResponse(http.StatusOK, eventsResponse{EventID: ev.ID, Accepted: out.Accepted, Message: out.Message})
}

func (b *Bridge) read(ctx context.Context, r Request, count bool) Response {
	community, pubkey, fail := b.authenticate(ctx, r)
	if fail != nil {
		return *fail
	}
	if err := b.Limiter.Check(ctx, ratelimit.Request{Community: community, Pubkey: pubkey, Read: true}); err != nil {
		if resp, limited := b.limited(ctx, err); limited {
			return resp
		}
	}
	if count {
		n, err := b.Reader.Count(ctx, community, pubkey, r.Body)
		if err != nil {
			return b.Fail(ctx, "count", err)
		}
		return jsonResponse(http.StatusOK, map[string]int64{"count": n})
	}
	if rs, ok := b.Reader.(ReadStateReader); ok && query.WantsReadStateSnapshot(r.Body) {
		snap, err := rs.ReadStateSnapshot(ctx, community, pubkey, r.Body)
		if err != nil {
			return b.Fail(ctx, "read-state snapshot", err)
		}
		return jsonResponse(http.StatusOK, snap)
	}
	evs, err := b.Reader.Query(ctx, community, pubkey, r.Body)
	if err != nil {
		return b.Fail(ctx, "query", err)
	}
	if evs == nil {
		evs = []json.RawMessage{}
	}
	return jsonResponse(http.StatusOK, evs)
}

// limited answers a limiter error: 429 with Retry-After when a limit was
// passed. A limiter that cannot reach its counters lets the request through
// (logged): the request itself then meets the same database.
func (b *Bridge) limited(ctx context.Context, err error) (Response, bool) {
	if _, ok := ratelimit.RetryAfter(err); !ok {
		b.Log.WarnContext(ctx, "rate limit check failed", "err", err)
		return Response{}, false
	}
	return b.Fail(ctx, "rate limit", err), true
}

// manage serves one NIP-86 call of the community at the request's host.
func (b *Bridge) manage(ctx context.Context, r Request) Response {
	c, pubkey, fail := b.authenticateAs(ctx, r, true)
	if fail != nil {
		return *fail
	}
	out, err := b.Manage.Serve(ctx, c, pubkey, r.Body)
	switch {
	case errors.Is(err, nip86.ErrForbidden):
		return rpcResponse(http.StatusForbidden, nip86.Response{Error: "restricted: only this community's operators may manage it"})
	case err != nil:
		return b.Fail(ctx, "nip86", err)
	case out.Error != "":
		return rpcResponse(http.StatusBadRequest, out)
	}
	return rpcResponse(http.StatusOK, out)
}

func rpcResponse(status int, v nip86.Response) Response {
	r := jsonResponse(status, v)
	r.Headers["content-type"] = nip86.ContentType
	return r
}

// unresolved answers a request whose Host serves no community: 404, never
// another community's data.
func (b *Bridge) unresolved(ctx context.Context, err error) Response {
	if community.Unknown(err) {
		return errorJSON(http.StatusNotFound, "invalid: no community is served at this host")
	}
	return b.Fail(ctx, "community", err)
}

// info is the NIP-11 document of the community served at the request's
// host: its name, description, icon and relay key.
func (b *Bridge) info(ctx context.Context, r Request) Response {
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		return b.unresolved(ctx, err)
	}
	if !strings.Contains(r.Headers["accept"], "application/nostr+json") {
		return Response{Status: http.StatusOK, Headers: cors(map[string]string{"content-type": "text/plain; charset=utf-8"}),
			Body: []byte("Buzz relay. Connect a nostr client over WebSocket, or send Accept: application/nostr+json for NIP-11.\n")}
	}
	sg, err := signer.For(ctx, b.Signer, c.ID)
	if err != nil {
		return b.Fail(ctx, "relay key", err)
	}
	doc := relayinfo.New(sg.PublicKey())
	doc.Describe(c.Name, c.About, c.Picture)
	doc.AdvertiseReadStateSnapshot(c.ID)
	if b.Limiter != nil {
		l := b.Limiter.Limits()
		doc.RateLimits = &relayinfo.RateLimits{EventsPerMinute: l.EventsPerMinute, EventBytesPerMinute: l.EventBytesPerMinute,
			ChannelsPerHour: l.ChannelsPerHour, ReadsPerMinute: l.ReadsPerMinute, WSMessagesPerMinute: l.MessagesPerMinute}
	}
	body, _ := json.Marshal(doc)
	return Response{Status: http.StatusOK, Headers: cors(map[string]string{"content-type": "application/nostr+json"}), Body: body}
}

// health answers GET /healthz without touching the database, so an uptime
// monitor never keeps a paused Aurora awake; GET /healthz?deep=1 also pings
// the database (503 while it is unreachable or resuming).
func (b *Bridge) health(ctx context.Context, r Request) Response {
	switch r.Query["deep"] {
	case "", "0", "false":
		return jsonResponse(http.StatusOK, map[string]bool{"ok": true})
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Store.Ping(ctx); err != nil {
		return b.Fail(ctx, "deep health check", err)
	}
	return jsonResponse(http.StatusOK, map[string]bool{"ok": true, "database": true})
}

// Fail is the response to err, as reject.Map says (status, prefixed text,
// Retry-After), logged by reject.Report under op.
func (b *Bridge) Fail(ctx context.Context, op string, err error) Response {
	a := reject.Report(ctx, b.Log, "bridge: "+op, err)
	r := errorJSON(a.Status, a.Text)
	if a.RetryAfter > 0 {
		r.Headers["retry-after"] = strconv.Itoa(a.RetryAfter)
	}
	return r
}

func jsonResponse(status int, v any) Response {
	body, err := marshal(v)
	if err != nil {
		return errorJSON(http.StatusServiceUnavailable, reject.Opaque)
	}
	return Response{Status: status, Headers: cors(map[string]string{"content-type": "application/json"}), Body: body}
}

func errorJSON(status int, msg string) Response {
	body, _ := marshal(map[string]string{"error": msg})
	return Response{Status: status, Headers: cors(map[string]string{"content-type": "application/json"}), Body: body}
}

// marshal encodes v without HTML escaping: messages quote tags like <id>.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func cors(h map[string]string) map[string]string {
	if h == nil {
		h = map[string]string{}
	}
	h["access-control-allow-origin"] = "*"
	h["access-control-allow-headers"] = "authorization, content-type"
	h["access-control-allow-methods"] = "GET, POST, OPTIONS"
	return h
}
