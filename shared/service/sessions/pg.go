package sessions

import (
	"context"
	"fmt"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// PG is the Store in Postgres (BUZZ_SESSIONS=0, and tests): the tables of
// migrations/003_websocket.sql through shared/postgres/store. It keeps no
// last-commit mark (every REQ reads the database, which it reaches
// anyway), and its open connections are the live connection rows (Opened
// records nothing: the first message stores the row). Its subscriptions
// are numbered by ws_subscriptions_seq, which is its Cutoff; the commit's
// own audience read also returns it (store.Deliveries.Cutoff), so a
// delivery never asks it separately.
type PG struct{ st *store.Store }

// NewPG is the Store over st.
func NewPG(st *store.Store) *PG { return &PG{st: st} }

// Database is the Postgres store behind p: the REQ path stores a
// subscription in its read's round trip (query.Engine.ReqSubscribed), and
// a commit reads its audience in its own (store.Tx.DeliveriesGetAtCommit).
func (p *PG) Database() *store.Store { return p.st }

func (p *PG) OpenConnection(ctx context.Context, c Connection) error {
	return p.st.ConnectionsInsert(ctx, c, 0)
}

func (p *PG) Connection(ctx context.Context, id string, now int64) (*Connection, error) {
	return p.st.ConnectionsGet(ctx, id, now)
}

func (p *PG) MarkChallengeSent(ctx context.Context, id string) (bool, error) {
	return p.st.ConnectionsSetChallengeSent(ctx, id)
}

func (p *PG) Authenticate(ctx context.Context, id, pubkey string) error {
	return p.st.ConnectionsSetAuthed(ctx, id, pubkey)
}

func (p *PG) Subscribe(ctx context.Context, s NewSubscription, lim Limits) error {
	verdict, err := p.st.SubscriptionsInsert(ctx, s, store.SubscribeLimits{PerConnection: lim.PerConnection, PerKey: lim.PerKey})
	if err != nil {
		return err
	}
	return refusalOf(verdict)
}

// refusalOf is the Store refusal of a store.SubscriptionsInsert verdict.
func refusalOf(v store.SubscribeVerdict) error {
	switch v {
	case store.Stored:
		return nil
	case store.KeyFull:
		return ErrKeyFull
	case store.UnknownConnection:
		return session.ErrUnknownConnection
	default:
		return ErrConnectionFull
	}
}

func (p *PG) EndSubscription(ctx context.Context, connection, sub string) (bool, error) {
	return p.st.SubscriptionsDelete(ctx, connection, sub)
}

func (p *PG) CloseConnection(ctx context.Context, id string) error {
	return p.st.ConnectionsDelete(ctx, id)
}

func (p *PG) SubscriptionsByKey(ctx context.Context, community string, keys [][2]string, now int64) ([]Subscription, error) {
	return p.st.SubscriptionsListByKey(ctx, community, keys, now)
}

func (p *PG) AudienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	return p.st.AudienceListBounds(ctx, community, channels, per)
}

func (p *PG) AudienceRange(ctx context.Context, community string, channels []string, cutoff int64, after, through string, now int64) ([]Subscription, error) {
	return p.st.AudienceListRange(ctx, community, channels, cutoff, after, through, now)
}

func (p *PG) Cutoff(ctx context.Context) (int64, error) {
	n, err := p.st.SubscriptionsGetCutoff(ctx)
	if err != nil {
		return 0, fmt.Errorf("sessions: cutoff: %w", err)
	}
	return n, nil
}

// RaiseMark keeps no mark: exists is always false.
func (p *PG) RaiseMark(context.Context, string, int64, bool) (int64, bool, error) {
	return 0, false, nil
}

// Mark is never known: the database answers every REQ.
func (p *PG) Mark(context.Context, string) (session.Mark, error) { return session.Mark{}, nil }

// Stamp keeps no stamp (no REQ is answered without the database): it
// returns at.
func (p *PG) Stamp(_ context.Context, _ string, at int64) (int64, error) { return at, nil }

func (p *PG) SaveResume(ctx context.Context, r session.Resume) error { return p.st.ResumesPut(ctx, r) }

func (p *PG) Resume(ctx context.Context, community, pubkey, sub, shape string, now int64) (*session.Resume, error) {
	return p.st.ResumesGet(ctx, community, pubkey, sub, shape, now)
}

// CountMessage counts in the rate counters (rate_counters), as the
// limiter's other counters.
func (p *PG) CountMessage(ctx context.Context, community, connection string, windowStart, _ int64) (int64, error) {
	k := store.ConnectionRateKey(connection)
	totals, err := p.st.RateCountersAdd(ctx, community, "", []records.RateHit{{Key: k, WindowStart: windowStart, Cost: 1}}, 0)
	if err != nil {
		return 0, fmt.Errorf("sessions: count message: %w", err)
	}
	return totals[k], nil
}

// Opened records nothing: the connection's row is its entry.
func (p *PG) Opened(context.Context, string, int64) error { return nil }

func (p *PG) OpenConnections(ctx context.Context, now int64) ([]string, error) {
	return p.st.ConnectionsListLive(ctx, now)
}

// ForgetOpen deletes the connection's row, as CloseConnection.
func (p *PG) ForgetOpen(ctx context.Context, id string) error {
	return p.st.ConnectionsDelete(ctx, id)
}
