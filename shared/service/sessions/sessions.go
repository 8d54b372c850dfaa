// Package sessions keeps the WebSocket sessions of API Gateway's model,
// where every client message is one invocation and invocations of one
// connection may land on different instances: connections with their
// NIP-42 challenge and authenticated key, and their REQ subscriptions,
// indexed by the channels their filters pin (tables of
// migrations/003_websocket.sql, through shared/postgres/store's
// connections.go and subscriptions.go). It also names the Sender every
// post to a connection goes through (shared/transport/apigw provides it)
// and the errors a Sender reports. Live delivery (shared/service/fanout)
// reads the subscriptions stored here; it does not keep them.
package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Sender posts one WebSocket message to one connection (PostToConnection).
// It returns an error wrapping ErrGone when the connection no longer exists
// (HTTP 410) and one wrapping ErrTooLarge when the message is over the limit.
type Sender interface {
	Post(ctx context.Context, connectionID string, data []byte) error
}

// Errors a Sender reports.
var (
	ErrGone     = errors.New("connection is gone")
	ErrTooLarge = errors.New("message is larger than the WebSocket limit")
)

// Lifetime is how long API Gateway keeps a WebSocket connection open; a
// connection row expires after it even when $disconnect never came.
const Lifetime = 2 * time.Hour

// ExpiresAt is when API Gateway closes a connection opened at connectedAt
// (unix seconds): its row's expires_at, the end of its host's trust.
func ExpiresAt(connectedAt int64) int64 { return connectedAt + int64(Lifetime/time.Second) }

// ErrUnknownConnection is returned for a connection id with no (live) row.
var ErrUnknownConnection = store.ErrUnknownConnection

// Connection is one WebSocket connection.
type Connection = store.Connection

// Registry stores connections and subscriptions. Safe for concurrent use.
type Registry struct {
	st  *store.Store
	now func() time.Time
}

// NewRegistry builds the registry over st.
func NewRegistry(st *store.Store) *Registry { return &Registry{st: st, now: time.Now} }

// Now is the registry's clock (a subscription's creation, a connection's
// liveness).
func (r *Registry) Now() time.Time { return r.now() }

// Open records c (replacing a row with the same id) and now and then prunes
// expired connections.
func (r *Registry) Open(ctx context.Context, c Connection) error {
	now := r.now().Unix()
	if c.ConnectedAt == 0 {
		c.ConnectedAt = now
	}
	if c.ExpiresAt == 0 {
		c.ExpiresAt = ExpiresAt(c.ConnectedAt)
	}
	// About one connect in 16 prunes rows whose $disconnect never came.
	var prune int64
	if len(c.Challenge) > 0 && c.Challenge[0] == '0' {
		prune = now
	}
	if err := r.st.OpenConnection(ctx, c, prune); err != nil {
		return fmt.Errorf("sessions: open %s: %w", c.ID, err)
	}
	return nil
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
	row, err := r.Row(community, connection, sub, reader, filters)
	if err != nil {
		return err
	}
	stored, err := r.st.Subscribe(ctx, row, max)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if !stored {
		return Full(max, sub)
	}
	return nil
}

// Row is the stored form of subscription sub of connection for reader
// with filters (what Subscribe stores; a REQ's read stores it in the same
// round trip, query.Engine.ReqSubscribed).
func (r *Registry) Row(community, connection, sub, reader string, filters []nostr.Filter) (store.NewSubscription, error) {
	raw, err := json.Marshal(filters)
	if err != nil {
		return store.NewSubscription{}, fmt.Errorf("sessions: encode filters: %w", err)
	}
	return store.NewSubscription{
		Subscription: store.Subscription{Connection: connection, Sub: sub, Pubkey: reader, Filters: string(raw)},
		Community:    community, Pins: Pins(filters), CreatedAt: r.now().Unix(),
	}, nil
}

// Full is the refusal of a new subscription sub past max on its
// connection.
func Full(max int, sub string) error {
	return reject.Restrictedf("a connection may hold %d subscriptions; CLOSE one before opening %q", max, sub)
}

// Unsubscribe removes subscription sub of connection (no error if absent).
func (r *Registry) Unsubscribe(ctx context.Context, connection, sub string) error {
	_, err := r.End(ctx, connection, sub)
	return err
}

// End removes subscription sub of connection and reports whether it was
// there (of concurrent enders, exactly one sees true).
func (r *Registry) End(ctx context.Context, connection, sub string) (bool, error) {
	return r.st.EndSubscription(ctx, connection, sub)
}

// Pins are the index keys of a subscription: the channels its filters
// pin, and "" when a filter pins none (the any-channel bucket). A filter
// with #h pins its channels; one of channel-state kinds only, its #d; one
// with an empty #h or #d matches nothing and pins nothing.
func Pins(filters []nostr.Filter) []string {
	set := map[string]bool{}
	for _, nf := range filters {
		f := filter.FromNostr(nf)
		if h, ok := f.Tags["h"]; ok {
			for _, c := range h {
				set[c] = true
			}
			continue
		}
		if d, ok := f.Tags["d"]; ok && access.StateOnly(f.Kinds) {
			for _, c := range d {
				set[c] = true
			}
			continue
		}
		set[""] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
