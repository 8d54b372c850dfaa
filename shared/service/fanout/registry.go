package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Lifetime is how long API Gateway keeps a WebSocket connection open; a
// connection row expires after it even when $disconnect never came.
const Lifetime = 2 * time.Hour

// ErrUnknownConnection is returned for a connection id with no (live) row.
var ErrUnknownConnection = store.ErrUnknownConnection

// Registry stores connections and subscriptions (shared/postgres/store,
// connections.go and subscriptions.go). Safe for concurrent use.
type Registry struct {
	st  *store.Store
	now func() time.Time
}

// NewRegistry builds the registry over st.
func NewRegistry(st *store.Store) *Registry { return &Registry{st: st, now: time.Now} }

// Connection is one WebSocket connection.
type Connection = store.Connection

// Open records c (replacing a row with the same id) and now and then prunes
// expired connections.
func (r *Registry) Open(ctx context.Context, c Connection) error {
	now := r.now().Unix()
	if c.ConnectedAt == 0 {
		c.ConnectedAt = now
	}
	if c.ExpiresAt == 0 {
		c.ExpiresAt = c.ConnectedAt + int64(Lifetime/time.Second)
	}
	// About one connect in 16 prunes rows whose $disconnect never came.
	var prune int64
	if len(c.Challenge) > 0 && c.Challenge[0] == '0' {
		prune = now
	}
	return r.st.OpenConnection(ctx, c, prune)
}

// Get returns the live connection id, or ErrUnknownConnection.
func (r *Registry) Get(ctx context.Context, id string) (*Connection, error) {
	return r.st.Connection(ctx, id, r.now().Unix())
}

// MarkChallengeSent records that the AUTH challenge went out; first is
// false when another invocation already sent it.
func (r *Registry) MarkChallengeSent(ctx context.Context, id string) (first bool, err error) {
	return r.st.MarkChallengeSent(ctx, id)
}

// Authenticate records pubkey as the connection's authenticated key.
func (r *Registry) Authenticate(ctx context.Context, id, pubkey string) error {
	return r.st.AuthenticateConnection(ctx, id, pubkey)
}

// Close deletes the connection and its subscriptions.
func (r *Registry) Close(ctx context.Context, id string) error {
	return r.st.CloseConnection(ctx, id)
}

// Subscribe stores (or replaces) subscription sub of connection for reader
// with filters, indexed by the channels they pin. It refuses a new id past
// max subscriptions on the connection.
func (r *Registry) Subscribe(ctx context.Context, community, connection, sub, reader string, filters []nostr.Filter, max int) error {
	raw, err := json.Marshal(filters)
	if err != nil {
		return fmt.Errorf("fanout: encode filters: %w", err)
	}
	stored, err := r.st.Subscribe(ctx, store.NewSubscription{
		Subscription: store.Subscription{Connection: connection, Sub: sub, Pubkey: reader, Filters: string(raw)},
		Community:    community, Pins: Pins(filters), CreatedAt: r.now().Unix(),
	}, max)
	if err != nil {
		return fmt.Errorf("fanout: %w", err)
	}
	if !stored {
		return reject.Restrictedf("a connection may hold %d subscriptions; CLOSE one before opening %q", max, sub)
	}
	return nil
}

// Unsubscribe removes subscription sub of connection (no error if absent).
func (r *Registry) Unsubscribe(ctx context.Context, connection, sub string) error {
	_, err := r.end(ctx, connection, sub)
	return err
}

// end removes subscription sub of connection and reports whether it was
// there.
func (r *Registry) end(ctx context.Context, connection, sub string) (bool, error) {
	return r.st.EndSubscription(ctx, connection, sub)
}

// candidate is a live subscription that may match an event.
type candidate struct {
	connection, sub, pubkey string
	raw                     string // its filters' JSON, decoded by decode
	filters                 []liveFilter
	named                   []string
}

func candidatesOf(subs []store.Subscription, err error) ([]candidate, error) {
	if err != nil {
		return nil, fmt.Errorf("fanout: %w", err)
	}
	out := make([]candidate, len(subs))
	for i, s := range subs {
		out[i] = candidate{connection: s.Connection, sub: s.Sub, pubkey: s.Pubkey, raw: s.Filters}
	}
	return out, nil
}

// decode parses the filters of every candidate. Dispatch to the fan-out
// function needs only their keys, so only delivery decodes.
func decode(cands []candidate) error {
	for i := range cands {
		c := &cands[i]
		if c.filters != nil {
			continue
		}
		var fs []nostr.Filter
		if err := json.Unmarshal([]byte(c.raw), &fs); err != nil {
			return fmt.Errorf("fanout: decode filters of %s/%s: %w", c.connection, c.sub, err)
		}
		c.filters = make([]liveFilter, 0, len(fs))
		for _, f := range fs {
			lf := newLiveFilter(f)
			c.filters = append(c.filters, lf)
			c.named = append(c.named, lf.named...)
		}
	}
	return nil
}

// pins reports whether one of the subscription's filters names channel.
func (c *candidate) pins(channel string) bool { return slices.Contains(c.named, channel) }

// subscriptions returns the live subscriptions of community among keys ([connection,
// sub] pairs); a closed one is absent.
func (r *Registry) subscriptions(ctx context.Context, community string, keys [][2]string) ([]candidate, error) {
	return candidatesOf(r.st.SubscriptionsByKey(ctx, community, keys, r.now().Unix()))
}

// audiencePart loads part of parts of the audience of channels stored up
// to cutoff (store.AudiencePart).
func (r *Registry) audiencePart(ctx context.Context, community string, channels []string, cutoff int64, part, parts int) ([]candidate, error) {
	return candidatesOf(r.st.AudiencePart(ctx, community, channels, cutoff, part, parts, r.now().Unix()))
}

// audienceRange loads the audience of channels stored up to cutoff whose
// connections are in (after, through] (store.AudienceRange).
func (r *Registry) audienceRange(ctx context.Context, community string, channels []string, cutoff int64, after, through string) ([]candidate, error) {
	return candidatesOf(r.st.AudienceRange(ctx, community, channels, cutoff, after, through, r.now().Unix()))
}

// audienceBounds splits the connections of the audience of channels into
// runs of per (store.AudienceBounds).
func (r *Registry) audienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	return r.st.AudienceBounds(ctx, community, channels, per)
}

// readable answers, for each pair, whether reader may read channel now
// (store.Readable: access.Reaches for all pairs at once; match.go applies
// the rest of the access rule per filter).
func (r *Registry) readable(ctx context.Context, community string, pairs []store.ReadPair) (map[store.ReadPair]bool, error) {
	return r.st.Readable(ctx, community, pairs)
}

// ephemeral is what delivery needs about an ephemeral event, which is
// never stored: its own h tag names its channel, d says whether that is a
// system channel.
func ephemeral(d *store.Deliveries, ev *nostr.Event, raw string) store.Delivered {
	ch, _ := nip29.ChannelTag(ev.Tags)
	return store.Delivered{Raw: raw, Channel: ch, System: d.System[ch]}
}
