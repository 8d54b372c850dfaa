// Package bridge is Buzz's HTTP bridge, free of any AWS type: POST /events,
// POST /query, POST /count (all NIP-98 authenticated), the NIP-11 document
// on GET /, GET /healthz, NIP-86 on POST / and Buzz's invite routes. Which
// request reaches which handler is shared/transport/routes' one table; the
// apigw package adapts API Gateway events to Request and Response; localdev
// calls it through the same adapter.
//
// It is a codec over the use cases of shared/service (relay, manage,
// invites): it resolves the community from the Host, verifies the NIP-98
// token, decodes the body, calls the use case and encodes the answer;
// every error becomes its HTTP status and JSON body in one place
// (answer.go).
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/gifs"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/livekit"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/service/workflow"
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
	// Address is the client's source address ("" unknown): an invite
	// claim's budget counts it.
	Address string
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

// Bridge answers the bridge's routes (shared/transport/routes says which
// function serves which).
type Bridge struct {
	// Database is what GET /healthz?deep=1 asks an operator's community's
	// figures of (the store).
	Database Database
	// Connections, when set, counts the community's open WebSocket
	// connections that GET /healthz?deep=1 reports, in place of the
	// database's count: the session store's, when the sessions are not
	// kept in the database.
	Connections OpenConnections
	// Guard decides who may read the deep health check's figures (an
	// operator of the community, guard.Manage); nil: no one.
	Guard *guard.Guard
	// Core is the use cases of publish and read.
	Core     *relay.Relay
	Signer   signer.Signer
	Verifier *nip98.Verifier
	Log      *slog.Logger
	// Manager is NIP-86's use case (POST / with
	// application/nostr+json+rpc); nil: not on this function.
	Manager *manage.Service
	// Communities maps a request's Host to its community.
	Communities *community.Registry
	// Directory, when set, is what NIP-11 resolves its host with instead
	// of Communities: documents kept outside the database
	// (shared/service/directory), so a polled NIP-11 runs no statement.
	Directory func(ctx context.Context, host string) (*community.Community, error)
	// Limits are advertised in NIP-11 (the use cases enforce them); nil:
	// none.
	Limits *ratelimit.Limiter
	// MediaInfo is what NIP-11 says of media; nil: media off.
	MediaInfo *relayinfo.Media
	// Push says what NIP-11 advertises of push notifications for a
	// community: NIP-9a when subscriptions are served, NIP-PL's
	// descriptor when leases are; nil: push is off.
	Push func(context.Context, *community.Community) (subscriptions bool, desc *push.Descriptor, err error)
	// Invites serves Buzz's invite routes (invites.go); nil: none.
	Invites *invites.Service
	// LiveKit serves NIP-29's LiveKit routes (livekit.go); nil or
	// unconfigured: off (discovery 404, the token endpoint refuses).
	LiveKit *livekit.Service
	// GIFs is Buzz's GIF proxy (gifs.go); nil or without a key: off (no
	// route, not advertised).
	GIFs *gifs.Service
	// Workflows serves Buzz's workflow routes (workflows.go); nil: 404.
	Workflows *workflow.Service
}

// NoRoute answers a request no route serves: 404.
func (b *Bridge) NoRoute(ctx context.Context, r Request) Response {
	return b.Fail(ctx, "route", because(errNoRoute, reject.Invalidf("no route for %s %s", r.Method, r.Path)))
}

// Preflight answers a CORS preflight (OPTIONS) of a bridge path.
func (b *Bridge) Preflight(context.Context, Request) Response {
	return Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}

// authenticate resolves the community and verifies the NIP-98 token
// against that community's replay table: the caller of the use cases.
func (b *Bridge) authenticate(ctx context.Context, r Request) (relay.Caller, error) {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return relay.Caller{}, err
	}
	return callerOf(c, pubkey, r), nil
}

// callerOf is the caller of r, authenticated as pubkey of community c.
func callerOf(c *community.Community, pubkey string, r Request) relay.Caller {
	return relay.Caller{Community: c.ID, Pubkey: pubkey, Size: len(r.Body), Host: community.NormalizeHost(r.Host),
		Origin: r.Scheme + "://" + r.Host, Address: r.Address}
}

// authenticateAs is authenticate; payload requires the token to bind the
// body (NIP-86).
func (b *Bridge) authenticateAs(ctx context.Context, r Request, payload bool) (*community.Community, string, error) {
	if len(r.Body) > relayinfo.MaxHTTPBodyLength {
		return nil, "", because(errTooLarge, reject.Invalidf("request body is larger than 1 MiB"))
	}
	if err := eventcheck.UTF8("request body", r.Body); err != nil {
		return nil, "", err
	}
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		return nil, "", unresolved(err)
	}
	pubkey, err := b.Verifier.Verify(ctx, nip98.Request{
		Community:      c.ID,
		Authorization:  r.Headers["authorization"],
		Method:         r.Method,
		URL:            r.URL(),
		Body:           r.Body,
		RequirePayload: payload,
	})
	if err != nil {
		return nil, "", fmt.Errorf("nip98: %w", err)
	}
	return c, pubkey, nil
}

// eventsResponse is the body of POST /events.
type eventsResponse struct {
	EventID  string `json:"event_id"`
	Accepted bool   `json:"accepted"`
	Message  string `json:"message"`
}

// Events is POST /events: relay.Publish.
func (b *Bridge) Events(ctx context.Context, r Request) Response {
	caller, err := b.authenticate(ctx, r)
	if err != nil {
		return b.Fail(ctx, "events", err)
	}
	var ev nostr.Event
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return b.Fail(ctx, "events", reject.Invalidf("body must be one JSON nostr event: %s", err))
	}
	out, err := b.Core.Publish(ctx, caller, &ev)
	if err != nil {
		return b.Fail(ctx, "events", err)
	}
	return JSON(http.StatusOK, eventsResponse{EventID: ev.ID, Accepted: out.Accepted, Message: out.Message})
}

// Query is POST /query: relay.Read (or relay.ReadStateSnapshot).
func (b *Bridge) Query(ctx context.Context, r Request) Response { return b.read(ctx, r, false) }

// Count is POST /count: relay.Count.
func (b *Bridge) Count(ctx context.Context, r Request) Response { return b.read(ctx, r, true) }

func (b *Bridge) read(ctx context.Context, r Request, count bool) Response {
	caller, err := b.authenticate(ctx, r)
	if err != nil {
		return b.Fail(ctx, "read", err)
	}
	req := relay.Request{Body: r.Body}
	if count {
		n, err := b.Core.Count(ctx, caller, req)
		if err != nil {
			return b.Fail(ctx, "count", err)
		}
		return JSON(http.StatusOK, map[string]int64{"count": n})
	}
	if relay.WantsReadStateSnapshot(r.Body) {
		snap, err := b.Core.ReadStateSnapshot(ctx, caller, r.Body)
		if err != nil {
			return b.Fail(ctx, "read-state snapshot", err)
		}
		return JSON(http.StatusOK, snap)
	}
	evs, err := b.Core.Read(ctx, caller, req)
	if err != nil {
		return b.Fail(ctx, "query", err)
	}
	if evs == nil {
		evs = []json.RawMessage{}
	}
	return JSON(http.StatusOK, evs)
}

// Manage is NIP-86's POST /: one call of the community at the request's
// host (manage.Service), answered through nip86.Answer.
func (b *Bridge) Manage(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.Fail(ctx, "nip86", err)
	}
	var res any
	call, err := nip86.Decode(r.Body)
	if err == nil {
		res, err = b.Manager.Serve(ctx, c, pubkey, call)
	}
	status, out, ok := nip86.Answer(res, err)
	if !ok {
		return b.Fail(ctx, "nip86", err)
	}
	resp := JSON(status, out)
	resp.Headers["content-type"] = nip86.ContentType
	return resp
}

// Info is GET /: the NIP-11 document of the community served at the
// request's host (its name, description, icon and relay key), or a line of
// text for a client that does not ask for it.
func (b *Bridge) Info(ctx context.Context, r Request) Response {
	resolve := b.Communities.Resolve
	if b.Directory != nil {
		resolve = b.Directory
	}
	c, err := resolve(ctx, r.Host)
	if err != nil {
		return b.Fail(ctx, "community", unresolved(err))
	}
	if !strings.Contains(r.Headers["accept"], "application/nostr+json") {
		return Response{Status: http.StatusOK, Headers: map[string]string{"content-type": "text/plain; charset=utf-8"},
			Body: []byte("Buzz relay. Connect a nostr client over WebSocket, or send Accept: application/nostr+json for NIP-11.\n")}
	}
	doc := relayinfo.New(c.Pubkey(b.Signer.PublicKey()))
	doc.Describe(c.Name, c.About, c.Picture)
	doc.AdvertiseReadStateSnapshot(c.ID)
	doc.AdvertiseBuzzV1()
	doc.AdvertiseMembership(c.MembershipEnforced)
	if b.Limits != nil {
		l := b.Limits.Limits()
		doc.RateLimits = &relayinfo.RateLimits{EventsPerMinute: l.EventsPerMinute, EventBytesPerMinute: l.EventBytesPerMinute,
			ChannelsPerHour: l.ChannelsPerHour, ReadsPerMinute: l.ReadsPerMinute, WSMessagesPerMinute: l.MessagesPerMinute}
	}
	doc.Media = b.MediaInfo
	doc.AdvertiseGIF(b.GIFs.On())
	if b.Push != nil {
		subs, desc, err := b.Push(ctx, c)
		if err != nil {
			return b.Fail(ctx, "push descriptor", err)
		}
		doc.AdvertisePush(subs, desc)
	}
	body, _ := json.Marshal(doc)
	return Response{Status: http.StatusOK, Headers: map[string]string{"content-type": "application/nostr+json"}, Body: body}
}

// Health answers GET /healthz: up, and nothing else, to anyone without
// an operator's NIP-98 token (with or without deep=1), without a
// statement or a session-store call, so an uptime monitor never keeps a
// paused Aurora awake and nobody learns a community's activity from it.
// With deep=1 and an Authorization header it is an operator's call:
// the token verified against the host's community, the key one of its
// operators (the door, guard.Manage: 401 or 403 otherwise, as NIP-86
// answers), then the database asked (waking it) and that community's
// figures answered (DeepHealth), never another's.
func (b *Bridge) Health(ctx context.Context, r Request) Response {
	switch r.Query["deep"] {
	case "", "0", "false":
		return JSON(http.StatusOK, map[string]bool{"ok": true})
	}
	if r.Headers["authorization"] == "" {
		return JSON(http.StatusOK, map[string]bool{"ok": true})
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.deepFailed(ctx, err)
	}
	if b.Guard == nil {
		return b.Fail(ctx, "deep health check", guard.ErrNotOperator)
	}
	if _, err := b.Guard.Admit(ctx, guard.Door{Community: c.ID, Caller: guard.Caller{Pubkey: pubkey}, Action: guard.Manage}); err != nil {
		return b.deepFailed(ctx, err)
	}
	ping := time.Since(start) // the token's replay record and the standing: the database answered
	st, err := b.Database.Status(ctx, c.ID)
	if err != nil {
		return b.deepFailed(ctx, err)
	}
	if b.Connections != nil {
		n, err := communityConnections(ctx, b.Connections, c.ID)
		if err != nil {
			return b.Fail(ctx, "deep health check: open connections", err)
		}
		st.Connections = n
	}
	return JSON(http.StatusOK, DeepHealth{OK: true, Database: DatabaseAwake, PingMillis: ping.Milliseconds(), Status: &st})
}

// deepFailed is the deep health check's failure: a database resuming
// says so (503, Retry-After), as the state; anything else as Fail.
func (b *Bridge) deepFailed(ctx context.Context, err error) Response {
	if a := reject.Map(err); a.Class == reject.Unavailable { // Fail's status, Retry-After and text, with the state
		resp := b.Fail(ctx, "deep health check", err)
		resp.Body, _ = marshal(DeepHealth{Database: DatabaseResuming, Error: a.Text})
		return resp
	}
	return b.Fail(ctx, "deep health check", err)
}

// communityConnections counts the open connections of community in the
// session store (each open connection's state read, 16 at a time: an
// operator's call, never a monitor's).
func communityConnections(ctx context.Context, oc OpenConnections, community string) (int64, error) {
	ids, err := oc.OpenConnections(ctx)
	if err != nil {
		return 0, err
	}
	var (
		n    atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		fail error
		sem  = make(chan struct{}, 16)
	)
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func(id string) {
			defer func() { <-sem; wg.Done() }()
			c, err := oc.Get(ctx, id)
			switch {
			case err != nil:
				mu.Lock()
				fail = err
				mu.Unlock()
			case c != nil && c.Community == community:
				n.Add(1)
			}
		}(id)
	}
	wg.Wait()
	if fail != nil {
		return 0, fail
	}
	return n.Load(), nil
}

// Database is the database as the deep health check sees it: a
// community's status (shared/postgres/store).
type Database interface {
	Status(ctx context.Context, community string) (records.Status, error)
}

// OpenConnections lists the open WebSocket connections and reads one's
// state (the session store's, shared/service/sessions).
type OpenConnections interface {
	OpenConnections(ctx context.Context) ([]string, error)
	Get(ctx context.Context, id string) (*session.Connection, error)
}

// Database states GET /healthz?deep=1 reports: awake (it answered) or
// resuming (Aurora is waking from a pause: 503 with Retry-After). A paused
// database is never observed as such: asking wakes it.
const (
	DatabaseAwake    = "awake"
	DatabaseResuming = "resuming"
)

// DeepHealth is GET /healthz?deep=1's answer to an operator: the
// database's state, how long its first answer took (a resume shows as a
// long one), and the community's records.Status (last write, open
// connections, media bytes, open reports). No push backlog: the push function keeps none
// (it posts what it is invoked with, or drops it).
type DeepHealth struct {
	OK         bool   `json:"ok"`
	Database   string `json:"database"`
	PingMillis int64  `json:"ping_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	*records.Status
}

// JSON is status with v as its JSON body: the one encoder of the HTTP
// answers (the route table adds each route's CORS headers).
func JSON(status int, v any) Response {
	body, err := marshal(v)
	if err != nil {
		return errorJSON(http.StatusServiceUnavailable, reject.Opaque)
	}
	return Response{Status: status, Headers: map[string]string{"content-type": "application/json"}, Body: body}
}

func errorJSON(status int, msg string) Response {
	body, _ := marshal(map[string]string{"error": msg})
	return Response{Status: status, Headers: map[string]string{"content-type": "application/json"}, Body: body}
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
