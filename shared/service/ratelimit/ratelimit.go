// Package ratelimit bounds what one key and one WebSocket connection may
// ask of the relay, across every stateless instance: counters live in
// Postgres (migrations/006_rate_limits.sql, shared/postgres/store ratelimits.go),
// fixed windows, and one check is one statement that adds the request's cost to every counter it touches
// and returns their totals. The allow-list is exempt from every limit,
// channel owners from the per-key ones (a connection's message limit
// counts every key alike, whichever store counts it).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Limits are the per-key and per-connection budgets; 0 disables one.
type Limits struct {
	EventsPerMinute     int64 // events one key submits (HTTP and WebSocket)
	EventBytesPerMinute int64 // bytes of those events
	ChannelsPerHour     int64 // 9007 channel creations by one key
	ReadsPerMinute      int64 // REQ, COUNT, /query and /count by one key
	MessagesPerMinute   int64 // WebSocket messages on one connection
	// Invite claims are counted by what a stranger cannot multiply
	// (guessing codes is hopeless at 160 bits; these bound the probing):
	// ClaimsPerMinute by one key first, then AddressClaimsPerMinute by
	// one source address where the transport knows it (an IPv6 address
	// by its /64), and CommunityClaimsPerMinute only the claims of a code
	// the community minted: a made-up code costs its caller, never the
	// community, so fresh keys cannot use up its newcomers' joins.
	ClaimsPerMinute          int64
	AddressClaimsPerMinute   int64
	CommunityClaimsPerMinute int64
	// GIFSearchesPerMinute bounds one key's calls of the relay's GIF proxy
	// (Buzz's gif_searches_per_min, 30 by default there too).
	GIFSearchesPerMinute int64
	// Allow lists pubkeys that no limit applies to (the relay's operators,
	// bots); owners of a channel are exempt too.
	Allow map[string]bool
}

// Defaults are the limits when the environment sets none (the
// environment is read once, by shared/wiring/config). They are sized
// so that a busy client, an agent or a test suite working from one key never
// meets them (a window paged over hundreds of rows, a channel per test),
// while a single-key flood (hundreds of events per second) is cut within the
// first second of its window.
var Defaults = Limits{
	EventsPerMinute:     600,
	EventBytesPerMinute: 16 << 20,
	ChannelsPerHour:     300,
	ReadsPerMinute:      3000,
	MessagesPerMinute:   6000,
	// A real newcomer claims once (a claim is idempotent), Buzz's relay
	// allows a key 10 a minute; an office behind one NAT address joining
	// from one posted invite at once is the address's burst.
	ClaimsPerMinute:          10,
	AddressClaimsPerMinute:   60,
	CommunityClaimsPerMinute: 600,
	// The desktop debounces the GIF picker's search by 400 ms, so a person
	// typing sends a few a minute.
	GIFSearchesPerMinute: 30,
}

// Request is what one client request costs.
type Request struct {
	Community  string
	Pubkey     string // "" before authentication
	Connection string // WebSocket connection id, "" on HTTP
	Event      bool   // an event submission
	EventBytes int
	NewChannel bool // a 9007
	Read       bool // REQ, COUNT, /query, /count
	Claim      bool // an invite's claim (28934, POST /api/invites/claim): the key's budget
	// ClaimAddress is the source address of a claim ("" none known): its
	// budget, asked after the key's (guard.Join).
	ClaimAddress string
	// ClaimOfKnownCode is a claim of a code the community minted: the
	// community's budget (guard.Join asks it after the key's and the
	// address's).
	ClaimOfKnownCode bool
	GIF              bool // a call of the GIF proxy (POST /gifs/search, /gifs/share)
	// Counted, when set, is the connection's message already counted
	// (Limiter.CountMessage): Check decides on its total and counts it
	// no more.
	Counted *Counted
}

// Counted is a connection's message being counted in the session store
// ahead of the Check that decides on it (which waits for it).
type Counted struct {
	done  chan struct{}
	total int64
	err   error
}

// Wait returns once the count is in (at once for nil: nothing counted).
func (c *Counted) Wait() {
	if c != nil {
		<-c.done
	}
}

// messageWindow is the window of a connection's message limit (seconds).
const messageWindow = 60

// CountMessage starts counting one message of connection (by pubkey, ""
// before AUTH) in community in the session store and returns at once, for
// a later Check to decide on (Request.Counted, which waits for the count),
// so that the count's round trip runs alongside others; nil when Check
// would not count it there (no MessageCounter, no limit, no connection, a
// key on the allow list). A caller that may return before a Check waits
// for it (Counted.Wait).
func (lm *Limiter) CountMessage(ctx context.Context, community, pubkey, connection string) *Counted {
	if lm == nil || lm.messages == nil || connection == "" || lm.l.MessagesPerMinute <= 0 || (pubkey != "" && lm.l.Allow[pubkey]) {
		return nil
	}
	return lm.startCount(ctx, community, connection, lm.now().Unix())
}

// startCount counts one message of connection in its window at now in
// the session store, in the background.
func (lm *Limiter) startCount(ctx context.Context, community, connection string, now int64) *Counted {
	c := &Counted{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.total, c.err = lm.messages.CountMessage(ctx, session.CountParams{Community: community, Connection: connection,
			WindowStart: now - now%messageWindow, Window: messageWindow})
	}()
	return c
}

// Exceeded is a refusal: rate-limited: with when to try again.
type Exceeded struct {
	Err        *reject.Error
	RetryAfter time.Duration
}

func (e *Exceeded) Error() string { return e.Err.Error() }
func (e *Exceeded) Unwrap() error { return e.Err }

// Wait is RetryAfter, for the wire's Retry-After (reject.Waiter).
func (e *Exceeded) Wait() time.Duration { return e.RetryAfter }

// Limiter checks requests against Limits. A nil *Limiter allows everything.
type Limiter struct {
	st  *store.Store
	l   Limits
	now func() time.Time
	// messages, when set, keeps the connections' message counters (the
	// session store: no database statement for them).
	messages MessageCounter
}

// MessageCounter keeps WebSocket connections' message counters outside
// the database (session.Store.CountMessage).
type MessageCounter interface {
	CountMessage(ctx context.Context, p session.CountParams) (int64, error)
}

// WithMessages returns a copy of lm that counts the connections' messages
// in mc (channel owners counted like every key, as in the database).
func (lm *Limiter) WithMessages(mc MessageCounter) *Limiter {
	c := *lm
	c.messages = mc
	return &c
}

// Message counts one WebSocket message of connection in community that
// asks for nothing else (an AUTH, a CLOSE, a REQ the session store
// answers) and returns an *Exceeded past MessagesPerMinute; pubkey on the
// allow list is exempt. Without a MessageCounter it counts in the
// database, as Check.
func (lm *Limiter) Message(ctx context.Context, community, pubkey, connection string) error {
	return lm.Check(ctx, Request{Community: community, Pubkey: pubkey, Connection: connection})
}

// New builds a limiter over st.
func New(st *store.Store, l Limits) *Limiter { return &Limiter{st: st, l: l, now: time.Now} }

// Limits returns the limiter's limits (NIP-11 advertises them).
func (lm *Limiter) Limits() Limits {
	if lm == nil {
		return Limits{}
	}
	return lm.l
}

type counter struct {
	key    string
	window int64 // seconds
	limit  int64
	cost   int64
	what   string
}

// Check counts r and returns an *Exceeded when it passes a limit (the
// request is counted either way: hammering does not reset the window).
func (lm *Limiter) Check(ctx context.Context, r Request) error {
	if lm == nil || (r.Pubkey != "" && lm.l.Allow[r.Pubkey]) {
		return nil
	}
	var cs []counter
	add := func(key string, window, limit, cost int64, what string) {
		if limit > 0 && cost > 0 {
			cs = append(cs, counter{key, window, limit, cost, what})
		}
	}
	if r.Connection != "" {
		add(store.ConnectionRateKey(r.Connection), messageWindow, lm.l.MessagesPerMinute, 1, "messages per minute on this connection")
	}
	if r.Pubkey != "" {
		if r.Event {
			add("ev:"+r.Pubkey, 60, lm.l.EventsPerMinute, 1, "events per minute")
			add("evb:"+r.Pubkey, 60, lm.l.EventBytesPerMinute, int64(r.EventBytes), "event bytes per minute")
		}
		if r.NewChannel {
			add("ch:"+r.Pubkey, 3600, lm.l.ChannelsPerHour, 1, "new channels per hour")
		}
		if r.Read {
			add("rd:"+r.Pubkey, 60, lm.l.ReadsPerMinute, 1, "reads per minute")
		}
		if r.GIF {
			add("gif:"+r.Pubkey, 60, lm.l.GIFSearchesPerMinute, 1, "GIF searches per minute")
		}
		if r.Claim {
			add("cl:"+r.Pubkey, 60, lm.l.ClaimsPerMinute, 1, "invite claims per minute by this key")
		}
		if r.ClaimAddress != "" {
			add("cl@"+AddressKey(r.ClaimAddress), 60, lm.l.AddressClaimsPerMinute, 1, "invite claims per minute from this address")
		}
		if r.ClaimOfKnownCode {
			add("cl*", 60, lm.l.CommunityClaimsPerMinute, 1, "invite claims per minute in this community")
		}
	}
	if len(cs) == 0 {
		return nil
	}
	now := lm.now().Unix()
	var (
		msg     *counter
		counted *Counted // nil: nothing counted in the session store
	)
	if lm.messages != nil && r.Connection != "" && cs[0].key == store.ConnectionRateKey(r.Connection) {
		// The connection's counter in the session store, alongside the
		// database's statement for the others.
		msg, cs = &cs[0], cs[1:]
		if counted = r.Counted; counted == nil {
			counted = lm.startCount(ctx, r.Community, r.Connection, now)
		}
	}
	totals := map[string]int64{}
	if len(cs) > 0 {
		hits := make([]records.RateHit, len(cs))
		for i, c := range cs {
			hits[i] = records.RateHit{Key: c.key, WindowStart: now - now%c.window, Cost: c.cost}
		}
		// About one call in 64 also prunes windows older than an hour.
		var prune int64
		if now%64 == 0 {
			prune = now - 3600
		}
		var err error
		if totals, err = lm.st.RateCountersAdd(ctx, r.Community, r.Pubkey, hits, prune); err != nil {
			counted.Wait()
			return fmt.Errorf("ratelimit: %w", err)
		}
	}
	if msg != nil {
		counted.Wait()
		if counted.err != nil {
			return fmt.Errorf("ratelimit: %w", counted.err)
		}
		totals[msg.key] = counted.total
		cs = append([]counter{*msg}, cs...)
	}
	for _, c := range cs {
		if h, ok := totals[c.key]; ok && h > c.limit {
			retry := time.Duration(c.window-now%c.window) * time.Second
			return &Exceeded{
				Err:        reject.New(reject.RateLimited, "over %d %s; try again in %d s", c.limit, c.what, int64(retry/time.Second)),
				RetryAfter: retry,
			}
		}
	}
	return nil
}

// AddressKey is how a source address is counted: an IPv4 address as it
// is, an IPv6 address by its /64 (one host commonly holds the whole
// prefix), anything else as written.
func AddressKey(addr string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return strings.TrimSpace(addr)
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// RetryAfter returns how long an Exceeded in err asks to wait.
func RetryAfter(err error) (time.Duration, bool) {
	var ex *Exceeded
	if errors.As(err, &ex) {
		return ex.RetryAfter, true
	}
	return 0, false
}
