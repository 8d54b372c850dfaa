package ddbsessions

import (
	"sync"
	"time"
)

// Subscribe's two sets, the connection's and the key's, are conditional
// writes on two items: DynamoDB cannot make them one without a
// transaction (which the local server lacks). Taken at once, each may
// count an id the other then refuses and withdraws: under a burst a set
// refuses while the subscriptions it will hold are under its limit (200
// REQs at once on one connection left fewer than its 20). Taken one after
// the other, the connection's set first, the key's set counts only ids
// its connections' sets took, so its refusals are exact, and the
// connection's set refuses early only for an id whose key is at its limit.
// That costs the REQ a second round trip, so a subscribe takes both at
// once while this instance knows its key's set to be far from its limit
// (at most half of it, counting the subscribes in flight here: other
// instances' are what the margin absorbs), and one after the other
// otherwise (a key it knows nothing fresh of, a burst).

// keyLoadFresh is how long a key set's size learnt here is trusted.
const keyLoadFresh = 10 * time.Second

// keyLoadCap bounds the keys kept; past it the idle, stale ones go.
const keyLoadCap = 10000

type keyLoad struct {
	held, inflight int
	at             time.Time
}

// keyLoads is, per key set, what this instance last learnt of its size
// and how many of its subscribes are in flight here.
type keyLoads struct {
	mu sync.Mutex
	m  map[string]*keyLoad
}

// begin counts a subscribe of key set kid in flight under perKey and
// reports whether it may take both sets at once.
func (kl *keyLoads) begin(kid string, perKey int, now time.Time) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if kl.m == nil {
		kl.m = map[string]*keyLoad{}
	}
	l := kl.m[kid]
	if l == nil {
		if len(kl.m) >= keyLoadCap {
			for k, x := range kl.m {
				if x.inflight == 0 && now.Sub(x.at) >= keyLoadFresh {
					delete(kl.m, k)
				}
			}
		}
		l = &keyLoad{}
		kl.m[kid] = l
	}
	alongside := !l.at.IsZero() && now.Sub(l.at) < keyLoadFresh && 2*(l.held+l.inflight+1) <= perKey
	l.inflight++
	return alongside
}

// end records a subscribe of kid done, the set holding held (0: not
// learnt); a fresh size only rises here (answers come out of order).
func (kl *keyLoads) end(kid string, held int, now time.Time) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	l := kl.m[kid]
	if l == nil {
		return
	}
	l.inflight--
	if held <= 0 {
		return
	}
	if now.Sub(l.at) < keyLoadFresh {
		held = max(held, l.held)
	}
	l.held, l.at = held, now
}
