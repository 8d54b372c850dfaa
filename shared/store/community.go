package store

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Communities resolves the community served at a Host, remembering each
// answer for a minute so a warm function asks the database once per host.
type Communities struct {
	st       *Store
	fallback string
	ttl      time.Duration
	hosts    sync.Map // host -> cachedCommunity
}

type cachedCommunity struct {
	id      string
	expires time.Time
}

// Communities returns a resolver that answers fallback for hosts without a
// community of their own.
func (s *Store) Communities(fallback string) *Communities {
	return &Communities{st: s, fallback: fallback, ttl: time.Minute}
}

// Resolve returns the community id for host (case-insensitive).
func (c *Communities) Resolve(ctx context.Context, host string) (string, error) {
	host = strings.ToLower(host)
	if v, ok := c.hosts.Load(host); ok && time.Now().Before(v.(cachedCommunity).expires) {
		return v.(cachedCommunity).id, nil
	}
	id, err := c.st.Community(ctx, host, c.fallback)
	if err != nil {
		return "", err
	}
	c.hosts.Store(host, cachedCommunity{id: id, expires: time.Now().Add(c.ttl)})
	return id, nil
}
