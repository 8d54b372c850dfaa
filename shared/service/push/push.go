// Package push is push notifications, off the publisher's path: NIP-9a
// subscriptions (kind 30390: a callback URL POSTed {id, relay, event?})
// and NIP-PL leases (kind 30350: a NIP-98-signed wake without content sent
// to the push gateway). Three use cases over one Service:
//
//   - Accept (accept.go, lease.go): ingest's rule for 30390 and 30350, in
//     the event's transaction: validated (shared/domain/push) with an
//     invalid: or restricted: answer, its effective state stored beside
//     the event (store.Tx.PushSubscriptionsUpsert).
//   - Committed (notify.go): the fan-out's one call after a commit: when
//     the community has any live subscription, the committed events' ids go
//     to the sender function in one asynchronous invoke (Invoker). Nothing
//     is matched there, so no callback delays an OK.
//   - Deliver (deliver.go): the sender function (functions/push-sender):
//     it matches the batch against the community's live subscriptions,
//     stores one pending delivery per (event, subscription) (a unique key:
//     a batch matched twice stores nothing twice), then sends each due
//     one after re-checking that its subscriber may read the event (the
//     access rule and the door, as live delivery does), marks it sent,
//     retries with backoff, and gives up (dead) after push.MaxAttempts; a
//     404 or repeated failures drop the subscription. A run that fails or
//     crashes is retried by Lambda, and what it acknowledged stays sent.
package push

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
)

// Invoker hands a batch to the sender function without waiting for it to
// run (Lambda Invoke with InvocationType Event; the emulator in make dev).
type Invoker interface {
	InvokeAsync(ctx context.Context, payload []byte) error
}

// Door is the door's verdict on the subscribers of one delivery: the keys
// it refuses now (shared/service/guard.Guard.Readers).
type Door interface {
	Readers(ctx context.Context, community string, pubkeys []string) (map[string]*reject.Error, error)
}

// Communities is what push reads about a community: its hostnames (the
// relay tag of a 30390 names one).
type Communities interface {
	Serving(ctx context.Context, id string) (*community.Community, error)
}

// Service is push notifications over one store. Safe for concurrent use.
type Service struct {
	Store       *store.Store
	Communities Communities
	Policy      push.Policy
	Log         *slog.Logger
	// Sender invokes the sender function (nil: Committed does nothing).
	Sender Invoker
	// Door re-checks each subscriber before a delivery (nil: none).
	Door Door
	// Dialer makes each try's request (dial.go): the dialer function
	// outside the VPC (Remote) in a deployment; nil: Direct over Client,
	// in this process.
	Dialer Dialer
	// Client sends callbacks and wakes when no Dialer is set (NewClient's,
	// whose dialer applies netpolicy.PublicAddr after DNS resolution).
	Client *http.Client
	// Gateway is the NIP-PL push gateway's delivery URL ("" : leases are
	// refused restricted:); Keys sign its NIP-98 wakes with the
	// community's relay key and open the executor keys (lease.go).
	Gateway  string
	Keys     signer.Keyring
	Executor *ExecutorKeys
	// Relay is the relay key (a Keyring: each community's), which opens
	// NIP-9a subscriptions of the sealed form, encrypted to NIP-11's self
	// (accept.go; nil: refused restricted:).
	Relay signer.Signer
	// Profiles are the gateway's app profiles (PUSH_APP_PROFILES);
	// PublicHost names the origin of a community served on any host.
	Profiles   []push.AppProfile
	PublicHost string
	// Concurrency bounds the tries one run has in flight
	// (push.SendConcurrency when 0).
	Concurrency int
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu     sync.Mutex
	active map[string]activeEntry // community → whether it has subscriptions
}

// activeTTL is how long an instance trusts its answer to "does this
// community have any live subscription": the community cache's 5 s.
const activeTTL = 5 * time.Second

type activeEntry struct {
	yes bool
	at  time.Time
	// marked: this instance stored a subscription (markActive), in a
	// transaction that may commit after a read that did not see it.
	marked bool
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// markActive records that community has a subscription (this instance
// just stored one).
func (s *Service) markActive(community string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		s.active = map[string]activeEntry{}
	}
	s.active[community] = activeEntry{yes: true, at: s.now(), marked: true}
}

// isActive reports whether community has any live subscription, asking
// the database at most once per activeTTL per instance.
func (s *Service) isActive(ctx context.Context, community string) (bool, error) {
	s.mu.Lock()
	e, ok := s.active[community]
	s.mu.Unlock()
	if ok && s.now().Sub(e.at) < activeTTL {
		return e.yes, nil
	}
	asked := s.now()
	yes, err := s.Store.PushSubscriptionsExists(ctx, community)
	if err != nil {
		return false, err
	}
	return s.remember(community, yes, asked), nil
}

// remember keeps the database's answer asked at asked, unless the entry
// is newer, or this instance stored a subscription within activeTTL
// (markActive): a read that ran before that transaction committed, even
// one that began after it stored, must not hide it for activeTTL. It
// returns what the community's entry then says.
func (s *Service) remember(community string, yes bool, asked time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		s.active = map[string]activeEntry{}
	}
	if cur, ok := s.active[community]; ok && (cur.at.After(asked) || cur.marked && s.now().Sub(cur.at) < activeTTL) {
		return cur.yes
	}
	if len(s.active) > 4096 {
		clear(s.active)
	}
	s.active[community] = activeEntry{yes: yes, at: asked}
	return yes
}
