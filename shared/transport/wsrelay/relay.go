// Package wsrelay is the WebSocket relay, free of any AWS type: NIP-01
// (EVENT, REQ, CLOSE), NIP-42 (AUTH) and NIP-45 (COUNT) over API Gateway's
// model of a WebSocket, where every client message is one invocation and
// every reply is a post to the connection (fanout.Sender), never a return
// value. Connection state lives in Postgres (fanout.Registry) because
// invocations of one connection may land on different instances.
//
// Writes go through the same ingest core as POST /events; reads through the
// same query engine and access rules as POST /query. Live delivery of
// committed events is shared/service/fanout.
package wsrelay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/service/fanout"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/query"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// Request is one API Gateway WebSocket event as the relay needs it.
type Request struct {
	ConnectionID string
	// Host the client connected to (the Host header on $connect, else the
	// API's domain name).
	Host string
	// Scheme is ws or wss, as the client addressed the relay.
	Scheme string
	// Stage is the API Gateway stage; a stage other than "$default" may
	// appear in the URL the client used.
	Stage string
	Body  []byte
}

// Reader is the read engine (shared/service/query).
type Reader interface {
	Req(ctx context.Context, community, reader string, filters []nostr.Filter) ([]json.RawMessage, error)
	CountFilters(ctx context.Context, community, reader string, filters []nostr.Filter) (int64, error)
}

// AuthWindow is how far a NIP-42 AUTH event's created_at may be from now.
const AuthWindow = 60 * time.Second

// Relay serves the three WebSocket routes. Safe for concurrent use.
type Relay struct {
	Registry *fanout.Registry
	Ingest   *ingest.Service
	Reader   Reader
	Fanout   *fanout.Fanout // nil: committed events are not delivered live
	Sender   fanout.Sender
	// Community resolves the community served at a host.
	Community func(ctx context.Context, host string) (string, error)
	// Admit, when set, is asked at $connect whether host serves a
	// community; its error refuses the upgrade. The ws-connect Lambda has
	// no pool and leaves it nil: the first message then answers the
	// refusal.
	Admit func(ctx context.Context, host string) error
	Log   *slog.Logger
	// Limiter bounds each connection's messages and each key's events and
	// reads; nil: no limits.
	Limiter *ratelimit.Limiter
	// Sigs checks AUTH signatures (nil: without remembering keys); the
	// instance shares it with ingest.
	Sigs  *sigverify.Verifier
	now   func() time.Time
	conns *connCache
}

// New wires the relay; fo may be nil.
func New(reg *fanout.Registry, ing *ingest.Service, rd Reader, fo *fanout.Fanout, s fanout.Sender,
	community func(context.Context, string) (string, error), log *slog.Logger) *Relay {
	return &Relay{Registry: reg, Ingest: ing, Reader: rd, Fanout: fo, Sender: s, Community: community,
		Log: log, now: time.Now, conns: newConnCache()}
}

// WithClock returns a copy of r that reads time from now (tests).
func (r *Relay) WithClock(now func() time.Time) *Relay {
	c := *r
	c.now = now
	return &c
}

// Connect accepts a new connection ($connect). It sends nothing (the socket
// is not open until it returns) and never touches the database: the
// connection is registered by its first message (Message opens an unknown
// connection), so a handshake never waits for a resuming database. An
// error refuses the connection.
func (r *Relay) Connect(ctx context.Context, req Request) error {
	if req.ConnectionID == "" || req.Host == "" {
		return errors.New("wsrelay: connect without connection id or host")
	}
	if r.Admit != nil {
		return r.Admit(ctx, hostOnly(req.Host))
	}
	return nil
}

func (r *Relay) open(ctx context.Context, req Request) (*fanout.Connection, error) {
	if req.ConnectionID == "" || req.Host == "" {
		return nil, errors.New("wsrelay: connect without connection id or host")
	}
	community, err := r.Community(ctx, hostOnly(req.Host))
	if err != nil {
		return nil, fmt.Errorf("wsrelay: community for %s: %w", req.Host, err)
	}
	c := fanout.Connection{
		ID:        req.ConnectionID,
		Community: community,
		RelayURLs: RelayURLs(req.Scheme, req.Host, req.Stage),
		Challenge: challenge(),
	}
	if err := r.Registry.Open(ctx, c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Disconnect forgets the connection and its subscriptions ($disconnect).
func (r *Relay) Disconnect(ctx context.Context, req Request) error {
	r.conns.drop(req.ConnectionID)
	return r.Registry.Close(ctx, req.ConnectionID)
}

// Message serves one client message ($default). Every answer is posted to
// the connection; Message itself never fails.
func (r *Relay) Message(ctx context.Context, req Request) {
	out := &replier{r: r, conn: req.ConnectionID}
	conn, err := r.connection(ctx, req)
	if err != nil {
		out.unanswered(ctx, req.Body, r.failure(ctx, "load connection", err))
		return
	}
	msg := out.parse(ctx, req.Body)
	if msg == nil {
		return
	}
	if r.limited(ctx, out, conn, msg, len(req.Body)) {
		return
	}
	switch msg.Verb {
	case VerbAuth:
		r.auth(ctx, out, conn, msg.Event)
	case VerbEvent:
		r.event(ctx, out, conn, msg.Event)
	case VerbReq:
		r.req(ctx, out, conn, msg)
	case VerbCount:
		r.count(ctx, out, conn, msg)
	case VerbClose:
		if err := r.Registry.Unsubscribe(ctx, conn.ID, msg.SubID); err != nil {
			out.send(ctx, notice(r.failure(ctx, "close "+msg.SubID, err)))
		}
	}
}

// limited counts msg against the connection's and the key's limits and,
// when one is passed, answers rate-limited: (OK false for EVENT, CLOSED for
// REQ/COUNT, else NOTICE). A check that cannot run lets msg through.
func (r *Relay) limited(ctx context.Context, out *replier, conn *fanout.Connection, msg *Message, size int) bool {
	lr := ratelimit.Request{Community: conn.Community, Pubkey: conn.Pubkey, Connection: conn.ID}
	switch msg.Verb {
	case VerbEvent:
		lr.Event, lr.EventBytes, lr.NewChannel = conn.Pubkey != "", size, msg.Event.Kind == kinds.CreateGroup
	case VerbReq, VerbCount:
		lr.Read = conn.Pubkey != ""
	}
	err := r.Limiter.Check(ctx, lr)
	if err == nil {
		return false
	}
	if _, ok := ratelimit.RetryAfter(err); !ok {
		r.Log.WarnContext(ctx, "wsrelay: rate limit check failed", "err", err)
		return false
	}
	out.refuse(ctx, msg, reject.Map(err).Text)
	return true
}

// connection is the connection of req: from this instance's cache once
// authenticated, else from the registry (re-opened when $connect was lost),
// sending the AUTH challenge on its first message.
func (r *Relay) connection(ctx context.Context, req Request) (*fanout.Connection, error) {
	if c, ok := r.conns.get(req.ConnectionID, r.now().Unix()); ok {
		return c, nil
	}
	out := &replier{r: r, conn: req.ConnectionID}
	conn, err := r.Registry.Get(ctx, req.ConnectionID)
	if errors.Is(err, fanout.ErrUnknownConnection) {
		// $connect was lost or the row expired: start over.
		conn, err = r.open(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	if conn.Pubkey == "" && !conn.ChallengeSent {
		first, err := r.Registry.MarkChallengeSent(ctx, conn.ID)
		if err != nil {
			r.Log.ErrorContext(ctx, "wsrelay: challenge", "connection", conn.ID, "err", err)
		}
		if first || err != nil {
			out.send(ctx, array("AUTH", conn.Challenge))
		}
		conn.ChallengeSent = err == nil
	}
	r.conns.put(conn)
	return conn, nil
}

func (r *Relay) auth(ctx context.Context, out *replier, conn *fanout.Connection, ev *nostr.Event) {
	if rej := r.checkAuth(conn, ev); rej != nil {
		out.send(ctx, okMessage(ev.ID, false, rej.Error()))
		return
	}
	if err := r.Registry.Authenticate(ctx, conn.ID, ev.PubKey); err != nil {
		out.send(ctx, okMessage(ev.ID, false, r.failure(ctx, "authenticate", err)))
		return
	}
	conn.Pubkey = ev.PubKey
	r.conns.put(conn)
	out.send(ctx, okMessage(ev.ID, true, ""))
}

// checkAuth validates a NIP-42 AUTH event against the connection.
func (r *Relay) checkAuth(conn *fanout.Connection, ev *nostr.Event) *reject.Error {
	if ev.Kind != nostr.KindClientAuthentication {
		return reject.Invalidf("AUTH needs a kind %d event, got kind %d", kinds.Auth, ev.Kind)
	}
	err := sigverify.ErrID // a pubkey that is not lowercase hex gets the id refusal, as before
	if eventcheck.LowerHex(ev.PubKey, 64) {
		err = r.Sigs.Event(ev)
	}
	switch err {
	case sigverify.ErrID:
		return reject.Invalidf("AUTH event id does not match its content")
	case sigverify.ErrSig:
		return reject.Invalidf("AUTH event signature is not valid")
	}
	skew := r.now().Sub(ev.CreatedAt.Time())
	if skew > AuthWindow || skew < -AuthWindow {
		return reject.Invalidf("AUTH event created_at is %d s from the relay's clock; it must be within %d s",
			int64(skew/time.Second), int64(AuthWindow/time.Second))
	}
	if ch, _ := filter.TagValue(ev.Tags, "challenge"); ch != conn.Challenge {
		return reject.Invalidf("AUTH challenge tag does not match the challenge this relay sent on this connection")
	}
	relay, _ := filter.TagValue(ev.Tags, "relay")
	for _, u := range conn.RelayURLs {
		if relayurl.Normalize(relay) == u {
			return nil
		}
	}
	return reject.Invalidf("AUTH relay tag %q does not name this relay (%s)", clip(relay), strings.Join(conn.RelayURLs, " or "))
}

func (r *Relay) event(ctx context.Context, out *replier, conn *fanout.Connection, ev *nostr.Event) {
	if conn.Pubkey == "" {
		out.send(ctx, okMessage(ev.ID, false, "auth-required: publishing needs NIP-42 AUTH first; answer the AUTH challenge"))
		return
	}
	res, err := r.Ingest.Submit(ctx, conn.Community, conn.Pubkey, ev)
	if err != nil {
		out.send(ctx, okMessage(ev.ID, false, r.failure(ctx, "event", err)))
		return
	}
	// Deliver before OK, as POST /events does: once the publisher has its
	// OK, every subscription that existed at commit has been posted to (or,
	// for an audience above the inline threshold, handed to the fan-out
	// function in parts holding exactly the subscriptions stored by then),
	// and a subscription opened after the OK gets the event as stored only. The
	// wait is bounded: at most FANOUT_INLINE_MAX subscriptions inline.
	if len(res.Committed) > 0 && r.Fanout != nil {
		r.Fanout.Deliver(ctx, conn.Community, res.Committed, res.Delivery)
	}
	out.send(ctx, okMessage(ev.ID, res.Accepted, res.Message))
}

func (r *Relay) req(ctx context.Context, out *replier, conn *fanout.Connection, msg *Message) {
	if conn.Pubkey == "" {
		out.send(ctx, array("CLOSED", msg.SubID, "auth-required: reading needs NIP-42 AUTH first; answer the AUTH challenge"))
		return
	}
	// Store the subscription before reading, so an event committed while
	// the stored events are read is delivered live rather than lost. A
	// search is one-shot (NIP-50, as Buzz serves it): nothing live after
	// EOSE, so it is not stored, and it ends a live one of the same id.
	var err error
	if slices.ContainsFunc(msg.Filters, query.IsSearch) {
		err = r.Registry.Unsubscribe(ctx, conn.ID, msg.SubID)
	} else {
		err = r.Registry.Subscribe(ctx, conn.Community, conn.ID, msg.SubID, conn.Pubkey, msg.Filters, relayinfo.MaxSubscriptions)
	}
	if err != nil {
		out.send(ctx, array("CLOSED", msg.SubID, r.failure(ctx, "subscribe", err)))
		return
	}
	evs, err := r.Reader.Req(ctx, conn.Community, conn.Pubkey, msg.Filters)
	if err != nil {
		if uerr := r.Registry.Unsubscribe(ctx, conn.ID, msg.SubID); uerr != nil {
			r.Log.ErrorContext(ctx, "wsrelay: drop failed subscription", "err", uerr)
		}
		out.send(ctx, array("CLOSED", msg.SubID, r.failure(ctx, "req", err)))
		return
	}
	out.sendAll(ctx, msg.SubID, evs)
	out.send(ctx, array("EOSE", msg.SubID))
}

func (r *Relay) count(ctx context.Context, out *replier, conn *fanout.Connection, msg *Message) {
	if conn.Pubkey == "" {
		out.send(ctx, array("CLOSED", msg.SubID, "auth-required: COUNT needs NIP-42 AUTH first; answer the AUTH challenge"))
		return
	}
	n, err := r.Reader.CountFilters(ctx, conn.Community, conn.Pubkey, msg.Filters)
	if err != nil {
		out.send(ctx, array("CLOSED", msg.SubID, r.failure(ctx, "count", err)))
		return
	}
	b, _ := json.Marshal([]any{"COUNT", msg.SubID, map[string]int64{"count": n}})
	out.send(ctx, b)
}

// failure renders err for the client as reject.Map says (logged by
// reject.Report).
func (r *Relay) failure(ctx context.Context, op string, err error) string {
	return reject.Report(ctx, r.Log, "wsrelay: "+op, err).Text
}

// replier posts the answers of one invocation to its connection, in order.
type replier struct {
	r    *Relay
	conn string
	gone atomic.Bool
	once sync.Once
}

func (p *replier) send(ctx context.Context, msg []byte) {
	if p.gone.Load() {
		return
	}
	err := p.r.Sender.Post(ctx, p.conn, msg)
	switch {
	case err == nil:
	case errors.Is(err, fanout.ErrGone):
		p.gone.Store(true)
		p.once.Do(func() {
			p.r.conns.drop(p.conn)
			if err := p.r.Registry.Close(ctx, p.conn); err != nil {
				p.r.Log.ErrorContext(ctx, "wsrelay: remove gone connection", "connection", p.conn, "err", err)
			}
		})
	default:
		p.r.Log.WarnContext(ctx, "wsrelay: post failed", "connection", p.conn, "err", err)
	}
}

// sendAll posts the stored events of sub one after another, in the order
// the read engine gave them (newest first); EOSE follows the last.
func (p *replier) sendAll(ctx context.Context, sub string, evs []json.RawMessage) {
	skipped := 0
	for _, raw := range evs {
		m := fanout.EventMessage(sub, string(raw))
		if len(m) > relayinfo.MaxMessageLength {
			skipped++
			continue
		}
		p.send(ctx, m)
	}
	if skipped > 0 {
		p.send(ctx, notice(fmt.Sprintf("error: %d stored events of %s are larger than the %d-byte WebSocket message limit; read them with POST /query", skipped, sub, relayinfo.MaxMessageLength)))
	}
}

func (p *replier) parseError(ctx context.Context, pe *ParseError) {
	switch {
	case (pe.Verb == VerbEvent || pe.Verb == VerbAuth) && pe.EventID != "":
		p.send(ctx, okMessage(pe.EventID, false, pe.Err.Error()))
	case (pe.Verb == VerbReq || pe.Verb == VerbCount) && pe.SubID != "":
		p.send(ctx, array("CLOSED", pe.SubID, pe.Err.Error()))
	default:
		p.send(ctx, notice(pe.Err.Error()))
	}
}

func okMessage(id string, ok bool, msg string) []byte {
	b, _ := json.Marshal([]any{"OK", id, ok, msg})
	return b
}

func notice(msg string) []byte { return array("NOTICE", msg) }

func array(parts ...string) []byte {
	b, _ := json.Marshal(parts)
	return b
}

func challenge() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RelayURLs are the normalized URLs that name the relay a client reached at
// scheme://host, with the stage path when API Gateway's default endpoint is
// used (wss://{api}.execute-api.{region}.amazonaws.com/{stage}).
func RelayURLs(scheme, host, stage string) []string {
	if scheme == "" {
		scheme = "wss"
	}
	base := scheme + "://" + host
	urls := []string{relayurl.Normalize(base)}
	if stage != "" && stage != "$default" {
		urls = append(urls, relayurl.Normalize(base+"/"+stage))
	}
	return urls
}

// hostOnly is host without a trailing dot, as communities are registered.
func hostOnly(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
