// Package session holds the nouns of the WebSocket sessions and the one
// interface their state lives behind (shared/service/sessions uses it;
// shared/aws/ddbsessions implements it), below every layer that needs
// them.
package session

import (
	"context"
	"errors"
	"time"
)

// Lifetime is how long API Gateway keeps a WebSocket connection open: no
// connection, nor anything of its session, outlives it.
const Lifetime = 2 * time.Hour

// Connection is one WebSocket connection.
type Connection struct {
	ID        string
	Community string
	// RelayURLs are the normalized URLs a NIP-42 relay tag may name.
	RelayURLs     []string
	Challenge     string
	ChallengeSent bool
	Pubkey        string // "" until authenticated
	ConnectedAt   int64
	ExpiresAt     int64
}

// Subscription is one stored REQ subscription: its connection, id,
// reader and filters as JSON.
type Subscription struct {
	Connection, Sub, Pubkey string
	Filters                 string
	// ClaimsUntil (unix s; 0: never) is set on a subscription whose REQ
	// was answered before it was stored: until then, live delivery claims
	// each stored event for it first (Store.Claim), as its catch-up read
	// does, so that an event both deliver goes out once.
	ClaimsUntil int64
}

// Held is how many subscriptions a connection's and a key's sets held
// once one was stored (0: not counted).
type Held struct {
	Connection, Key int
	// Subs are the connection's subscription ids once one was stored
	// (nil: not known).
	Subs []string
}

// NewSubscription is a subscription to store: Subscription plus its
// community, the channels its filters pin ("" is the any-channel bucket)
// and when it was stored (unix seconds).
type NewSubscription struct {
	Subscription
	Community string
	Pins      []string
	CreatedAt int64
	// Expires is the connection's expiry as the caller read it (0: not
	// known): a store may then write the subscription alongside its
	// limits' checks rather than after them (it is stored with the
	// connection's own expiry either way).
	Expires int64
}

// ErrUnknownConnection is returned for a connection id with no live
// connection.
var ErrUnknownConnection = errors.New("session: unknown connection")

// Store is where the WebSocket sessions live: connections with their
// NIP-42 state, their REQ subscriptions indexed by the channels they pin,
// each community's last-commit mark and last-write stamp, the records of
// answered REQs, the per-connection message counters and the registry of
// open connections the liveness tick posts to. DynamoDB holds it
// (shared/aws/ddbsessions: no Aurora statement for a session's life); it
// passes the conformance suite of shared/testing/sessionstest. Calls that
// take more than three values take a params struct.
//
// Times are unix seconds unless said otherwise. A connection past its
// ExpiresAt, and with it its subscriptions, is absent from every read even
// before it is deleted.
type Store interface {
	// OpenConnection records c, replacing a connection with the same id
	// (its challenge state and key become c's; its subscriptions stay).
	OpenConnection(ctx context.Context, c Connection) error
	// Connection returns connection id if live at now, else
	// ErrUnknownConnection.
	Connection(ctx context.Context, id string, now int64) (*Connection, error)
	// MarkChallengeSent records that the challenge of id went out; first
	// is false when another call already recorded it.
	MarkChallengeSent(ctx context.Context, id string) (first bool, err error)
	// Authenticate records pubkey as id's key; ErrUnknownConnection when
	// there is no such connection.
	Authenticate(ctx context.Context, id, pubkey string) error
	// CloseConnection forgets connection id, its subscriptions and its
	// entry among the open connections (no error when it is unknown).
	CloseConnection(ctx context.Context, id string) error

	// Subscribe stores (or replaces) s and reports how many subscriptions
	// the connection's and the key's sets held once it was (Held; 0 for a
	// set without a limit). It refuses, with ErrConnectionFull or
	// ErrKeyFull and nothing changed, a new subscription id past
	// lim.PerConnection subscriptions of its connection or past
	// lim.PerKey subscriptions of its key in its community (0: no limit);
	// both limits are exact under concurrency. A replaced subscription
	// keeps counting once.
	Subscribe(ctx context.Context, s NewSubscription, lim Limits) (Held, error)
	// EndSubscription removes subscription sub of connection and reports
	// whether it was there (of concurrent enders, exactly one sees true).
	EndSubscription(ctx context.Context, connection, sub string) (bool, error)
	// CloseSubscription is EndSubscription for a client's CLOSE (or a REQ
	// that replaces the id with a one-shot read): it also leaves a
	// tombstone at at (unix ns) that a REQ answered before its store
	// landed reads once stored (ClosedAt) to withdraw what it stored
	// (Withdraw).
	CloseSubscription(ctx context.Context, connection, sub string, at int64) (bool, error)
	// ClosedAt is when subscription sub of connection was last closed
	// (unix ns; 0: never).
	ClosedAt(ctx context.Context, connection, sub string) (int64, error)
	// Withdraw removes s, stored for a REQ whose CLOSE came while its
	// store landed, and gives back what it counted.
	Withdraw(ctx context.Context, s NewSubscription) error
	// Claim reports whether this call is the first to claim p.Event for
	// subscription p.Sub of p.Connection; a claim is kept until at least
	// p.Until (unix s). Live delivery claims each stored event for a
	// subscription with ClaimsUntil set, as its catch-up read does.
	Claim(ctx context.Context, p ClaimParams) (bool, error)

	// SubscriptionsByKey returns the live subscriptions of community among
	// keys ([connection, sub] pairs); a closed one is absent.
	SubscriptionsByKey(ctx context.Context, community string, keys [][2]string, now int64) ([]Subscription, error)
	// AudienceBounds splits the connections holding a subscription of
	// community pinned to one of channels or to the any-channel bucket ""
	// into runs of per, in connection id order, and returns the last id
	// of each run (nil: none). Run i is AudienceRange(bounds[i-1],
	// bounds[i]], the first from "".
	AudienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error)
	// AudienceRange returns the live subscriptions of p.Community pinned
	// to one of p.Channels or the any-channel bucket, whose connection id
	// is in (p.After, p.Through] and whose position is at most p.Cutoff
	// (stored before the commit being delivered: Cutoff), each once.
	AudienceRange(ctx context.Context, p AudienceRangeParams) ([]Subscription, error)
	// Cutoff is, asked after a commit, a position at or above that of
	// every subscription stored before the commit, and below that of one
	// stored after it: AudienceRange's cutoff for the commit's delivery.
	Cutoff(ctx context.Context) (int64, error)

	// RaiseMark makes community's last-commit mark at least v. With
	// create false it changes nothing when the community has no mark yet
	// (exists false); otherwise it returns the mark as it is after the
	// call (at least v).
	RaiseMark(ctx context.Context, community string, v int64, create bool) (mark int64, exists bool, err error)
	// Mark reads community's last-commit mark and last-write stamp,
	// strongly consistent (a zero Mark when there is none).
	Mark(ctx context.Context, community string) (Mark, error)
	// Stamp raises community's last-write stamp to at least at (unix s)
	// and returns it as it is after the call.
	Stamp(ctx context.Context, community string, at int64) (int64, error)
	// SaveResume stores r, replacing the record of the same community,
	// key, subscription id and shape.
	SaveResume(ctx context.Context, r Resume) error
	// Resume returns the record of p's community, key, subscription id and
	// shape live at p.Now, or nil.
	Resume(ctx context.Context, p ResumeParams) (*Resume, error)

	// CountMessage adds one to p.Connection's message counter of the fixed
	// window starting at p.WindowStart (p.Window seconds long) and returns
	// its total; the counter expires after its window. Concurrent counts
	// are each counted once.
	CountMessage(ctx context.Context, p CountParams) (int64, error)

	// Opened records connection id, which expires at expires, among the
	// open connections the liveness tick posts to.
	Opened(ctx context.Context, id string, expires int64) error
	// OpenConnections lists the open connections live at now.
	OpenConnections(ctx context.Context, now int64) ([]string, error)
	// ForgetOpen removes id from the open connections (a post found it
	// gone).
	ForgetOpen(ctx context.Context, id string) error
}

// ClaimParams name one delivery of an event to a subscription
// (Store.Claim).
type ClaimParams struct {
	Connection, Sub, Event string
	// Until is how long the claim is kept at least (unix s).
	Until int64
}

// AudienceRangeParams name one run of a delivery's audience
// (Store.AudienceRange).
type AudienceRangeParams struct {
	Community string
	Channels  []string
	// Cutoff is the highest position read (Store.Cutoff).
	Cutoff int64
	// After and Through bound the connection ids: (After, Through].
	After, Through string
	Now            int64
}

// ResumeParams name one resume record (Store.Resume).
type ResumeParams struct {
	Community, Pubkey, Sub, Shape string
	Now                           int64
}

// CountParams name one message of a connection (Store.CountMessage).
type CountParams struct {
	Community, Connection string
	// WindowStart and Window are the fixed window's start (unix s) and
	// length (s).
	WindowStart, Window int64
}

// Limits bound the subscriptions Subscribe stores; 0 is no limit.
type Limits struct {
	PerConnection int
	PerKey        int
}

// Refusals of Store.Subscribe.
var (
	ErrConnectionFull = errors.New("session: the connection holds its limit of subscriptions")
	ErrKeyFull        = errors.New("session: the key holds its limit of subscriptions in the community")
)
