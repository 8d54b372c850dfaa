// Package community is the registry of the communities one deployment
// hosts: which community a request's Host names (rows of the communities
// and community_hosts tables, refreshed within a few seconds so a community
// added by `localdev/community add` or NIP-86 is served at once), and each
// community's relay key, decrypted on first use and cached per warm
// instance.
package community

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Community is one hosted community: what it was created with (Spec,
// as changed since) and what the relay keeps about it.
type Community struct {
	Spec
	Limits json.RawMessage
	// RelayPubkey and Ciphertext are the community's relay key (empty
	// while it has none of its own: the default community of a relay
	// configured with RELAY_SECRET_KEY or a key file).
	RelayPubkey string
	Ciphertext  []byte
	CreatedAt   time.Time
	DisabledAt  *time.Time
	// MembershipEnforced: NIP-43, only the community's members may
	// publish, read, count or upload (AdmitMember).
	MembershipEnforced bool
}

// Operator reports whether pubkey may manage the community over NIP-86.
func (c *Community) Operator(pubkey string) bool {
	for _, op := range c.Operators {
		if op == pubkey {
			return true
		}
	}
	return false
}

// AdmitMember is the NIP-43 gate (nip43.Gate) of community id: nil when
// the community does not enforce membership (its flag as cached, so a
// change reaches every instance within TTL; the instance that made it
// forgets at once) or pubkey is an operator (an owner) or a relay_members
// row (read live, so a removal takes effect on the next request), else
// nip43.ErrNotMember.
func (r *Registry) AdmitMember(ctx context.Context, id, pubkey string) error {
	c, err := r.byID(ctx, id)
	if err != nil {
		return fmt.Errorf("community: membership of %.12s: %w", pubkey, err)
	}
	if nip43.Admits(c.MembershipEnforced, ownerRole(c, pubkey)) {
		return nil
	}
	role, err := r.st.RelayMembersGetRole(ctx, id, pubkey)
	if err != nil {
		return fmt.Errorf("community: membership of %.12s: %w", pubkey, err)
	}
	if nip43.Admits(c.MembershipEnforced, role) {
		return nil
	}
	return nip43.ErrNotMember
}

// AdmitMembers is AdmitMember for many keys at once (live delivery's
// readers): the keys among pubkeys the NIP-43 gate refuses now, with
// nothing asked of the database when the community does not enforce
// membership (its flag as cached) and one statement for the keys that are
// not operators when it does.
func (r *Registry) AdmitMembers(ctx context.Context, id string, pubkeys []string) (refused map[string]bool, err error) {
	c, err := r.byID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("community: membership of %d keys: %w", len(pubkeys), err)
	}
	if !c.MembershipEnforced {
		return nil, nil
	}
	var ask []string
	for _, pk := range pubkeys {
		if !nip43.Admits(true, ownerRole(c, pk)) {
			ask = append(ask, pk)
		}
	}
	if len(ask) == 0 {
		return nil, nil
	}
	roles, err := r.st.RelayMembersListRoles(ctx, id, ask)
	if err != nil {
		return nil, fmt.Errorf("community: membership of %d keys: %w", len(ask), err)
	}
	for _, pk := range ask {
		if !nip43.Admits(true, roles[pk]) {
			if refused == nil {
				refused = map[string]bool{}
			}
			refused[pk] = true
		}
	}
	return refused, nil
}

// ownerRole is nip43.Owner for an operator of c, else "".
func ownerRole(c *Community, pubkey string) string {
	if c.Operator(pubkey) {
		return nip43.Owner
	}
	return ""
}

// ErrUnknownHost is the answer for a Host no enabled community serves.
var ErrUnknownHost = errors.New("community: no community is served at this host")

// Unknown reports whether err means the host serves no community.
func Unknown(err error) bool { return errors.Is(err, ErrUnknownHost) }

// Pubkey is the relay pubkey c signs with (NIP-11's pubkey) without
// opening its key: its own, else the configured key's (configured), as
// Keys.ForCommunity signs for the default community.
func (c *Community) Pubkey(configured string) string {
	if c.RelayPubkey != "" {
		return c.RelayPubkey
	}
	return configured
}

// Served is the one rule of which communities are served: an enabled one
// (a disabled community keeps its data and is refused on every door).
func (c *Community) Served() bool { return c != nil && c.DisabledAt == nil }

// notServed is the refusal of a request to a community that is unknown or
// disabled, on every door: restricted: (404 over HTTP, as an unknown host),
// saying no more than an unknown host does.
type notServed struct{ r *reject.Error }

func (n *notServed) Error() string   { return n.r.Error() }
func (n *notServed) Unwrap() []error { return []error{n.r, ErrUnknownHost} }

// ErrNotServed is that refusal.
var ErrNotServed error = &notServed{r: &reject.Error{Prefix: reject.Restricted, Reason: "no community is served at this host", Status: http.StatusNotFound}}

// Serving returns community id as cached (within TTL, as Resolve), or
// ErrNotServed when it is unknown or disabled: the door guard asks it of
// every request, so a disable reaches every door within TTL, whatever
// resolved the community (a Host, a WebSocket connection's state).
func (r *Registry) Serving(ctx context.Context, id string) (*Community, error) {
	c, err := r.byID(ctx, id)
	if errors.Is(err, ErrNoCommunity) {
		return nil, ErrNotServed
	}
	if err != nil {
		return nil, err
	}
	if !c.Served() {
		return nil, ErrNotServed
	}
	return c, nil
}

// Defaults of the registry's caching.
const (
	// DefaultTTL is how long a resolved host is trusted; a community
	// added, disabled or re-keyed elsewhere is seen within it.
	DefaultTTL = 5 * time.Second
	// maxCached bounds the host and key caches of one instance.
	maxCached = 1024
)

// Registry resolves hosts to communities. Safe for concurrent use.
type Registry struct {
	st       *store.Store
	fallback string
	// TTL is how long a found community is reused (a miss is asked again).
	TTL time.Duration
	now func() time.Time

	mu    sync.Mutex
	hosts map[string]cached
	ids   map[string]cached
}

type cached struct {
	c       *Community // nil: no community at this host
	expires time.Time
}

// NewRegistry reads communities from st. fallback (BUZZ_COMMUNITY) serves
// every host while no community has a hostname at all (a single-community
// relay, as a fresh `make dev`); once one hostname is registered only
// registered hostnames are served.
func NewRegistry(st *store.Store, fallback string) *Registry {
	return &Registry{st: st, fallback: fallback, TTL: DefaultTTL, now: time.Now, hosts: map[string]cached{}, ids: map[string]cached{}}
}

// Fallback is the deployment's default community.
func (r *Registry) Fallback() string { return r.fallback }

// NormalizeHost lowercases host and drops its port and a trailing dot.
func NormalizeHost(host string) string { return relayurl.Hostname(host) }

// Resolve returns the enabled community served at host, or an error that
// Unknown recognises (a 404 on HTTP, a refused socket on WebSocket).
func (r *Registry) Resolve(ctx context.Context, host string) (*Community, error) {
	host = NormalizeHost(host)
	now := r.now()
	r.mu.Lock()
	e, ok := r.hosts[host]
	r.mu.Unlock()
	if !ok || !now.Before(e.expires) {
		c, err := r.load(ctx, host)
		if err != nil {
			return nil, err
		}
		e = cached{c: c, expires: now.Add(r.TTL)}
		// A miss is not remembered: a community added a moment ago is
		// served on its first request (the lookup is one primary-key read).
		if c != nil {
			r.remember(r.hosts, host, e)
			r.remember(r.ids, c.ID, e)
		}
	}
	if !e.c.Served() {
		return nil, ErrUnknownHost
	}
	return e.c, nil
}

// ResolveID is Resolve's community id, for the handlers that need only it.
func (r *Registry) ResolveID(ctx context.Context, host string) (string, error) {
	c, err := r.Resolve(ctx, host)
	if err != nil {
		return "", NotServedAt(host, err)
	}
	return c.ID, nil
}

// NotServedAt is err, a failed resolution of host, as the WebSocket door
// answers it: restricted: when no community is served there (unknown and
// disabled alike: no oracle), else err.
func NotServedAt(host string, err error) error {
	if Unknown(err) {
		return reject.Restrictedf("no community is served at host %q", NormalizeHost(host))
	}
	return err
}

// Forget drops every cached answer (after this instance changed a
// community itself).
func (r *Registry) Forget() {
	r.mu.Lock()
	clear(r.hosts)
	clear(r.ids)
	r.mu.Unlock()
}

// byID returns community id as cached (disabled ones too: their key still
// signs what an in-flight request finishes).
func (r *Registry) byID(ctx context.Context, id string) (*Community, error) {
	now := r.now()
	r.mu.Lock()
	e, ok := r.ids[id]
	r.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.c, nil
	}
	c, err := Get(ctx, r.st, id)
	if err != nil {
		return nil, err
	}
	r.remember(r.ids, id, cached{c: c, expires: now.Add(r.TTL)})
	return c, nil
}

func (r *Registry) remember(m map[string]cached, k string, e cached) {
	r.mu.Lock()
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = e
	r.mu.Unlock()
}

func (r *Registry) load(ctx context.Context, host string) (*Community, error) {
	row, err := r.st.CommunitiesGetByHost(ctx, host, r.fallback)
	if errors.Is(err, records.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("community: resolve host %q: %w", host, err)
	}
	return fromRow(row), nil
}

// Get reads community id (disabled ones too); ErrNoCommunity when unknown.
func Get(ctx context.Context, st *store.Store, id string) (*Community, error) {
	row, err := st.CommunitiesGet(ctx, id)
	if err != nil {
		return nil, known(err, id)
	}
	return fromRow(row), nil
}

// List reads every community, by id.
func List(ctx context.Context, st *store.Store) ([]*Community, error) {
	rows, err := st.CommunitiesList(ctx)
	if err != nil {
		return nil, fmt.Errorf("community: %w", err)
	}
	out := make([]*Community, len(rows))
	for i, row := range rows {
		out[i] = fromRow(row)
	}
	return out, nil
}

func fromRow(r *records.Community) *Community {
	return &Community{
		Spec:   Spec{ID: r.ID, Hosts: r.Hosts, Name: r.Name, About: r.About, Picture: r.Picture, Operators: r.Operators},
		Limits: r.Limits, RelayPubkey: r.RelayPubkey, Ciphertext: r.Ciphertext, CreatedAt: r.CreatedAt, DisabledAt: r.DisabledAt,
		MembershipEnforced: r.MembershipEnforced,
	}
}

// admitWait bounds the database lookup of a WebSocket upgrade, so a
// handshake never waits on a resuming database longer than this.
const admitWait = 500 * time.Millisecond

// Admit refuses (restricted:) the WebSocket upgrade of a host known to
// serve no enabled community. When that cannot be known quickly (the
// database is away or slow) it admits: the connection's first message
// resolves the host again and is refused then.
func (r *Registry) Admit(ctx context.Context, host string) error {
	return Admit(ctx, host, r.ResolveID)
}

// Admit is the rule of Registry.Admit over any resolver of a host's
// community id (the registry, or shared/service/directory's documents).
func Admit(ctx context.Context, host string, resolveID func(context.Context, string) (string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, admitWait)
	defer cancel()
	_, err := resolveID(ctx, host)
	if _, ok := reject.As(err); ok {
		return err
	}
	return nil
}
