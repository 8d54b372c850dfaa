package wsrelay

import (
	"sync"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// connCache keeps, in a warm instance, the connections whose AUTH
// challenge went out and whose key is authenticated, so their next
// messages skip the registry read. AUTH only ever sets a key the
// connection proved, so a cached key stays one the connection may act as,
// even when a later AUTH on another instance proved a second one. Entries
// go with $disconnect on this instance, a 410 Gone, or their expiry.
type connCache struct {
	mu  sync.Mutex
	m   map[string]session.Connection
	max int
}

// maxCachedConnections bounds the cache (a few hundred bytes each).
const maxCachedConnections = 20000

func newConnCache() *connCache {
	return &connCache{m: map[string]session.Connection{}, max: maxCachedConnections}
}

// get returns a copy of the cached connection id, live at now.
func (c *connCache) get(id string, now int64) (*session.Connection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, ok := c.m[id]
	if !ok {
		return nil, false
	}
	if conn.ExpiresAt <= now {
		delete(c.m, id)
		return nil, false
	}
	return &conn, true
}

// put caches conn once it is authenticated and challenged.
func (c *connCache) put(conn *session.Connection) {
	if conn.Pubkey == "" || !conn.ChallengeSent {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[conn.ID]; !ok && len(c.m) >= c.max {
		for id := range c.m { // evict an arbitrary entry
			delete(c.m, id)
			break
		}
	}
	c.m[conn.ID] = *conn
}

func (c *connCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
