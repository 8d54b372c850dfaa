package session

import "sync"

// Highest is, per key, the highest value an instance has seen of
// something that never goes down in the store (a community's mark or
// last-write stamp, a key set's expiry): what lets it skip a read or a
// write that could only confirm it. Past Cap keys (0: no cap) it forgets
// them all; a forgotten key reads 0, which only costs the store's own
// answer again. Safe for concurrent use; the zero value is ready.
type Highest struct {
	Cap int
	mu  sync.Mutex
	m   map[string]int64
}

// Get is the highest value seen of key (0: none).
func (h *Highest) Get(key string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[key]
}

// Saw records v as seen of key: kept when above what was.
func (h *Highest) Saw(key string, v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || (h.Cap > 0 && len(h.m) >= h.Cap) {
		h.m = map[string]int64{}
	}
	h.m[key] = max(h.m[key], v)
}
