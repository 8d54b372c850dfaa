package sessions

import "github.com/buzzrelay/relay/shared/domain/session"

// The session state's interface and nouns live in shared/domain/session
// (below the stores that implement them); these names are theirs.
type (
	// Store is where the WebSocket sessions live (session.Store).
	Store = session.Store
	// Limits bound the subscriptions Store.Subscribe stores.
	Limits = session.Limits
	// Subscription is one stored REQ subscription.
	Subscription = session.Subscription
	// NewSubscription is a subscription to store.
	NewSubscription = session.NewSubscription
)

// Refusals of Store.Subscribe.
var (
	ErrConnectionFull = session.ErrConnectionFull
	ErrKeyFull        = session.ErrKeyFull
)
