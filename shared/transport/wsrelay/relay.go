// Package wsrelay is the WebSocket codec, free of any AWS type: NIP-01
// (EVENT, REQ, CLOSE), NIP-42 (AUTH), NIP-45 (COUNT) and NIP-77
// (NEG-OPEN, NEG-MSG, NEG-CLOSE; VerbNIPs) over API Gateway's
// model of a WebSocket, where every client message is one invocation and
// every reply is a post to the connection (wire.Sender), never a return
// value. Connection state lives in the session store (shared/service/sessions,
// DynamoDB) because invocations of one connection may land on different
// instances.
//
// It decodes a message, authenticates the connection (NIP-42), calls the
// use case (shared/service/relay: the same Publish, Subscribe and Count as
// POST /events, /query and /count) and encodes the answer; every error
// becomes its wire form in one place (fail, unanswered.go).
package wsrelay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/authevent"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/service/relay"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
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
	// Address is the client's source address ("" unknown): an invite
	// claim's budget counts it.
	Address string
}

// Relay serves the three WebSocket routes. Safe for concurrent use.
type Relay struct {
	// Sessions keeps connections (challenge, authenticated key); Core is
	// the use cases every message other than AUTH goes to; Sender posts
	// the answers.
	Sessions *sessions.Registry
	Core     *relay.Relay
	Sender   wire.Sender
	// Community resolves the community served at a host.
	Community func(ctx context.Context, host string) (string, error)
	// Hosts, when set, resolves a new connection's host instead of
	// Community: from documents kept
	// outside the database (shared/service/directory), which say when a
	// community is disabled.
	Hosts func(ctx context.Context, host string) (string, error)
	// Admit, when set, is asked at $connect whether host serves a
	// community; its error refuses the upgrade. The ws-connect Lambda has
	// no pool and leaves it nil: the first message then answers the
	// refusal.
	Admit func(ctx context.Context, host string) error
	Log   *slog.Logger
	// Sigs checks AUTH signatures (nil: without remembering keys); the
	// instance shares it with ingest.
	Sigs *sigverify.Verifier
	// Challenges derives each connection's NIP-42 challenge from its id,
	// in both modes: the push function's greeting at $connect and the
	// reply to a first message send the same string (the zero value: a
	// key of this process only).
	Challenges wire.Challenges
	// Greeter, when set, is handed each accepted connection at $connect
	// (wire.GreetEvent, an asynchronous invocation of the push
	// function), which posts its challenge as soon as the socket is open.
	Greeter Invoker
	now     func() time.Time
	conns   *connCache
	pacer   *wire.Pacer
}

// Invoker invokes a function asynchronously (shared/aws/lambdainvoke).
type Invoker interface {
	InvokeAsync(ctx context.Context, payload []byte) error
}

// New wires the relay over the sessions of reg and the use cases of core;
// until Challenges is set, its challenges are this process's own
// (wire.Challenges' zero value).
func New(reg *sessions.Registry, core *relay.Relay, s wire.Sender,
	community func(context.Context, string) (string, error), log *slog.Logger) *Relay {
	return &Relay{Sessions: reg, Core: core, Sender: s, Community: community,
		Log: log, now: time.Now, conns: newConnCache(), pacer: wire.NewPacer(wire.PostRate, wire.PostBurst)}
}

// WithClock returns a copy of r that reads time from now (tests).
func (r *Relay) WithClock(now func() time.Time) *Relay {
	c := *r
	c.now = now
	return &c
}

// Connect accepts a new connection ($connect). It posts nothing (the
// socket is not open until it returns) and never touches the database: the
// connection is registered by its first message (Message opens an unknown
// connection), so a handshake never waits for a resuming database. An
// accepted connection is handed to the Greeter, whose invocation posts the
// challenge once the socket is open; a failed hand-off is logged, and the
// first message brings the challenge as before. An error refuses the
// connection.
func (r *Relay) Connect(ctx context.Context, req Request) error {
	if req.ConnectionID == "" || req.Host == "" {
		return errors.New("wsrelay: connect without connection id or host")
	}
	if r.Admit != nil {
		if err := r.Admit(ctx, hostOnly(req.Host)); err != nil {
			return err
		}
	}
	if r.Greeter != nil {
		if err := r.Greeter.InvokeAsync(ctx, wire.GreetEvent(req.ConnectionID)); err != nil {
			r.Log.WarnContext(ctx, "wsrelay: greeting not handed over", "connection", req.ConnectionID, "err", err)
		}
	}
	return nil
}

func (r *Relay) open(ctx context.Context, req Request) (*session.Connection, error) {
	if req.ConnectionID == "" || req.Host == "" {
		return nil, errors.New("wsrelay: connect without connection id or host")
	}
	community, err := r.hostCommunity(ctx, hostOnly(req.Host))
	if err != nil {
		return nil, fmt.Errorf("wsrelay: community for %s: %w", req.Host, err)
	}
	c := session.Connection{
		ID:        req.ConnectionID,
		Community: community,
		RelayURLs: RelayURLs(req.Scheme, req.Host, req.Stage),
		Challenge: r.Challenges.For(req.ConnectionID),
	}
	c, err = r.Sessions.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Disconnect forgets the connection and its subscriptions ($disconnect).
func (r *Relay) Disconnect(ctx context.Context, req Request) error {
	return r.forget(ctx, req.ConnectionID, nil)
}

// forget drops connection id: its cached state and its session.
func (r *Relay) forget(ctx context.Context, id string, cause error) error {
	r.conns.drop(id)
	return r.Sessions.Drop(ctx, r.Sender, id, cause)
}

// Message serves one client message ($default). Every answer is posted to
// the connection; Message itself never fails.
func (r *Relay) Message(ctx context.Context, req Request) {
	out := &replier{r: r, conn: req.ConnectionID}
	conn, challenge, err := r.connection(ctx, req)
	if err != nil {
		out.unanswered(ctx, req.Body, "load connection", err)
		return
	}
	msg, perr := Parse(req.Body)
	if challenge && !answers(msg, conn) {
		out.send(ctx, wire.AuthMessage(conn.Challenge))
	}
	if perr != nil {
		out.parseFailed(ctx, perr)
		return
	}
	c := relay.Caller{Community: conn.Community, Pubkey: conn.Pubkey, Connection: conn.ID, Size: len(req.Body),
		Host: relayurl.Hostname(req.Host), Origin: wsOrigin(req), Address: req.Address, Session: conn}
	switch msg.Verb {
	case VerbAuth:
		r.auth(ctx, out, conn, c, msg)
	case VerbEvent:
		// The OK goes out before live delivery runs: no recipient delays it.
		res, deliver, err := r.Core.PublishThenDeliver(ctx, c, msg.Event)
		if err != nil {
			out.fail(ctx, "event", answerTo(msg), err)
			return
		}
		out.send(ctx, okMessage(msg.Event.ID, res.Accepted, res.Message))
		deliver(ctx)
	case VerbReq:
		// What follows the answer (a replay's record) runs once EOSE is out.
		evs, after, err := r.Core.SubscribeThen(ctx, c, relay.Request{Sub: msg.SubID, Filters: msg.Filters, ThreadWindows: msg.ThreadWindows})
		if err != nil {
			out.fail(ctx, "req", answerTo(msg), err)
			return
		}
		out.answerReq(ctx, msg.SubID, evs)
		if err := after(ctx); err != nil {
			// Stored after its answer and then refused, or its catch-up
			// failed: the subscription is over (early.go in relay).
			out.fail(ctx, "req", answerTo(msg), err)
		}
	case VerbCount:
		n, err := r.Core.Count(ctx, c, relay.Request{Filters: msg.Filters})
		if err != nil {
			out.fail(ctx, "count", answerTo(msg), err)
			return
		}
		b, _ := json.Marshal([]any{"COUNT", msg.SubID, map[string]int64{"count": n}})
		out.send(ctx, b)
	case VerbNegOpen, VerbNegMsg, VerbNegClose:
		m := relay.Reconcile{Sub: msg.SubID, Message: msg.Negentropy, Close: msg.Verb == VerbNegClose}
		if msg.Verb == VerbNegOpen {
			m.Filter = &msg.Filters[0]
		}
		reply, err := r.Core.Negentropy(ctx, c, m)
		if err != nil {
			out.fail(ctx, "negentropy "+msg.SubID, answerTo(msg), err)
			return
		}
		if reply != "" {
			out.send(ctx, array(VerbNegMsg, msg.SubID, reply))
		}
	case VerbClose:
		if err := r.Core.Close(ctx, c, relay.Request{Sub: msg.SubID}); err != nil {
			out.fail(ctx, "close "+msg.SubID, answerTo(msg), err)
		}
	}
}

// answers reports whether msg is an AUTH answering conn's challenge: the
// client has the challenge (the one pushed at connect), so the reply to
// its first message need not carry it again.
func answers(msg *Message, conn *session.Connection) bool {
	if msg == nil || msg.Verb != VerbAuth || msg.Event == nil {
		return false
	}
	ch, _ := filter.TagValue(msg.Event.Tags, "challenge")
	return ch == conn.Challenge
}

// connection is the connection of req: from this instance's cache once
// authenticated, else from the registry (re-opened when $connect was lost).
// challenge is true when the reply to this message, the connection's
// first on this instance, is to carry the AUTH challenge (again: the push
// function sent it as the connection opened).
func (r *Relay) connection(ctx context.Context, req Request) (conn *session.Connection, challenge bool, err error) {
	if c, ok := r.conns.get(req.ConnectionID, r.now().Unix()); ok {
		return c, false, nil
	}
	conn, err = r.Sessions.Get(ctx, req.ConnectionID)
	if errors.Is(err, session.ErrUnknownConnection) {
		// $connect was lost or the row expired: start over.
		conn, err = r.open(ctx, req)
	}
	if err != nil {
		return nil, false, err
	}
	if conn.Pubkey == "" && !conn.ChallengeSent {
		first, err := r.Sessions.MarkChallengeSent(ctx, conn.ID)
		if err != nil {
			r.Log.ErrorContext(ctx, "wsrelay: challenge", "connection", conn.ID, "err", err)
		}
		challenge = first || err != nil
		conn.ChallengeSent = err == nil
	}
	r.conns.put(conn)
	return conn, challenge, nil
}

// hostCommunity is the community a new connection to host is served by:
// Hosts' (the directory), else Community's.
func (r *Relay) hostCommunity(ctx context.Context, host string) (string, error) {
	if r.Hosts != nil {
		return r.Hosts(ctx, host)
	}
	return r.Community(ctx, host)
}

// auth serves a NIP-42 AUTH: counted against the connection's limit, the
// event checked against the connection's challenge and URLs, its key
// recorded as the connection's.
func (r *Relay) auth(ctx context.Context, out *replier, conn *session.Connection, c relay.Caller, msg *Message) {
	ev := msg.Event
	err := r.Core.Admit(ctx, c) // the session store's counter when the sessions live there
	if err == nil {
		if rej := r.checkAuth(conn, ev); rej != nil {
			err = rej
		}
	}
	if err == nil {
		err = r.Sessions.Authenticate(ctx, conn.ID, ev.PubKey)
	}
	if err != nil {
		out.fail(ctx, "authenticate", answerTo(msg), err)
		return
	}
	conn.Pubkey = ev.PubKey
	r.conns.put(conn)
	out.send(ctx, okMessage(ev.ID, true, ""))
}

// checkAuth validates a NIP-42 AUTH event against the connection.
func (r *Relay) checkAuth(conn *session.Connection, ev *nostr.Event) *reject.Error {
	return authevent.Checker{Sigs: r.Sigs, Now: r.now()}.NIP42(ev, conn.Challenge, conn.RelayURLs)
}

// replier posts the answers of one invocation to its connection. A post
// that finds the connection gone (or times out, wire.Post) drops it
// once; no post is made after that.
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
	err := wire.Post(ctx, p.r.Sender, p.conn, msg, 0)
	switch {
	case err == nil:
	case errors.Is(err, wire.ErrGone):
		p.gone.Store(true)
		p.once.Do(func() {
			if err := p.r.forget(ctx, p.conn, err); err != nil {
				p.r.Log.ErrorContext(ctx, "wsrelay: remove gone connection", "connection", p.conn, "err", err)
			}
		})
	default:
		p.r.Log.WarnContext(ctx, "wsrelay: post failed", "connection", p.conn, "err", err)
	}
}

// answerReq posts the stored events of sub, then its EOSE once every one
// of them was accepted (sendAll).
func (p *replier) answerReq(ctx context.Context, sub string, evs []json.RawMessage) {
	p.sendAll(ctx, sub, evs)
	p.send(ctx, array("EOSE", sub))
}

// sendAll posts the stored events of sub, at most wire.PostsInFlight
// at a time and paced per connection (wire.Pacer: PostBurst at once,
// then PostRate a second, shared with the connection's other answers on
// this instance), and returns once every post was answered, so that a
// client that reads is never left with more waiting than API Gateway
// holds for it. Concurrent posts may be accepted, and so reach the
// client, in another order than the read engine's (newest first); every
// one is accepted before the EOSE that follows (README, Compatibility).
// Once the connection is gone no further post starts. A stored event too
// large for one WebSocket message is left out, never cut, and named in
// a NOTICE (tooLarge).
func (p *replier) sendAll(ctx context.Context, sub string, evs []json.RawMessage) {
	var skipped []json.RawMessage
	sem := make(chan struct{}, wire.PostsInFlight)
	var wg sync.WaitGroup
	for _, raw := range evs {
		m := wire.EventMessage(sub, string(raw))
		if len(m) > relayinfo.MaxMessageLength {
			skipped = append(skipped, raw)
			continue
		}
		sem <- struct{}{}
		if p.gone.Load() || p.r.pacer.Wait(ctx, p.conn) != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			p.send(ctx, m)
		}()
	}
	wg.Wait()
	if len(skipped) > 0 {
		p.fail(ctx, "req", target{}, tooLarge(sub, skipped))
	}
}

// tooLarge is the NOTICE for stored events of sub that no WebSocket
// message can carry (stored before the write-time limit,
// relayinfo.MaxEventBytes): how many, and the ids of the first ones, so a
// client can tell which it lacks (they stay readable with POST /query).
func tooLarge(sub string, evs []json.RawMessage) error {
	const shown = 10
	ids := make([]string, 0, min(len(evs), shown))
	for _, raw := range evs[:min(len(evs), shown)] {
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &ev) == nil {
			ids = append(ids, ev.ID)
		}
	}
	return reject.New(reject.Internal, "%d stored events matching %q are larger than the %d-byte WebSocket message limit and were left out, never cut (read them with POST /query): %s",
		len(evs), sub, relayinfo.MaxMessageLength, strings.Join(ids, ","))
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

// wsOrigin is the URL the client addressed (the port kept), ws unless
// the request says wss.
func wsOrigin(req Request) string {
	scheme := req.Scheme
	if scheme == "" {
		scheme = "wss"
	}
	return scheme + "://" + req.Host
}

// hostOnly is host without a trailing dot, as communities are registered.
func hostOnly(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
