package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// A live REQ may be answered before its subscription is stored (the
// relay's early answer) only when the store cannot refuse it for the
// limits: the answer would otherwise be EOSE followed by CLOSED. The
// registry keeps what this instance learnt of how many subscriptions a
// connection and a key hold (the highest count the store reported to its
// recent subscribes, less what it closed since) and how many of theirs it
// is storing now (early or not), and admits an early answer only while
// both stay at or under half their limit: other instances of the same connection or key
// may have added some since, which the margin absorbs. A connection or
// key it has no fresh count of is not admitted: its REQ waits for the
// store's verdict, which brings the count.

// roomFresh is how long a count learnt here is trusted.
const roomFresh = 10 * time.Second

// roomMax bounds the counts kept; past it the stale ones are dropped.
const roomMax = 10000

type roomCount struct {
	held, storing int
	// early is how many of storing are early answers not yet stored:
	// answered EOSE, so held as far as the client knows; drained, when
	// made, is closed once early is back to 0 (awaitAnswered).
	early   int
	drained chan struct{}
	at      time.Time
	// ids, for a connection, are the subscription ids the store reported
	// it holds (learn), less those closed here.
	ids map[string]bool
}

type rooms struct {
	mu      sync.Mutex
	counts  map[string]*roomCount   // connection id, or "key" + community + pubkey
	pending map[string]*Reservation // connection id + sub id → its early answer's reservation
}

func roomKey(community, pubkey string) string { return "key\x1f" + community + "\x1f" + pubkey }

// Reservation is an early answer's place in its connection's and key's
// counts, to hand back once its subscription is stored or refused
// (Registry.PutHeld), or its id closed (Registry.CloseSub, Release).
type Reservation struct {
	conn, key, sub string
	done           bool // handed back (under rooms.mu)
	superseded     bool // its id was closed or asked for again here (under rooms.mu)
	early          bool // an early answer's (Reserve), not a stored REQ's (storing)
	replaces       bool // its id was held when reserved, as known here
}

// Replaces reports whether res's id names a subscription its connection
// holds, as this instance last learnt (a REQ that replaces it).
func (res *Reservation) Replaces() bool { return res != nil && res.replaces }

func pendingKey(conn, sub string) string { return conn + "\x1f" + sub }

// Reserve admits an early answer for a new subscription sub of connection
// by pubkey in community under lim (Reservation, true), or not (false):
// the REQ then waits for the store's verdict.
func (r *Registry) Reserve(connection, community, pubkey, sub string, lim session.Limits) (*Reservation, bool) {
	if lim.PerConnection <= 0 || lim.PerKey <= 0 || pubkey == "" {
		return nil, false
	}
	res := &Reservation{conn: connection, key: roomKey(community, pubkey), sub: sub}
	now := r.now()
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	c, k := r.room.counts[res.conn], r.room.counts[res.key]
	fresh := func(x *roomCount, max int) bool {
		return x != nil && now.Sub(x.at) < roomFresh && 2*(x.held+x.storing+1) <= max
	}
	if !fresh(c, lim.PerConnection) || !fresh(k, lim.PerKey) {
		return nil, false
	}
	for _, x := range []*roomCount{c, k} {
		x.storing++
		x.early++
	}
	res.early, res.replaces = true, c.ids[sub]
	if r.room.pending == nil {
		r.room.pending = map[string]*Reservation{}
	}
	if old := r.room.pending[pendingKey(connection, sub)]; old != nil {
		r.room.supersede(old) // a REQ of the same id replaced it
	}
	r.room.pending[pendingKey(connection, sub)] = res
	return res, true
}

// PutHeld is Put that records, for later Reserve calls, the counts the
// store reported, and hands back res once the store decided. Without a
// reservation (res nil: a REQ that waits for the store) the subscription
// counts as being stored all the same while it is.
func (r *Registry) PutHeld(ctx context.Context, row session.NewSubscription, lim session.Limits, res *Reservation) error {
	if res == nil {
		r.awaitAnswered(ctx, row, lim)
		res = r.storing(row.Connection, roomKey(row.Community, row.Pubkey))
	}
	held, err := r.st.Subscribe(ctx, row, lim)
	r.Release(res)
	switch {
	case err == nil:
	case errors.Is(err, session.ErrConnectionFull):
		held = session.Held{Connection: lim.PerConnection}
	case errors.Is(err, session.ErrKeyFull):
		held = session.Held{Key: lim.PerKey}
	}
	r.learn(row.Connection, roomKey(row.Community, row.Pubkey), held)
	return r.verdict(err, row, lim)
}

// answeredWait bounds how long a REQ stored here waits for the early
// answers of its connection and key pending here (awaitAnswered).
const answeredWait = 2 * time.Second

// awaitAnswered waits, at most answeredWait, until the early answers of
// row's connection and key this instance answered and has not stored yet
// are stored or dropped, when row stored now could meet their limit (past
// half of it, where Reserve admits no early answer): those were answered
// EOSE before row's REQ came, and the store counts only what it holds, so
// they must land first. (Another instance's pending answers are not
// known here: should the store refuse one of those once it lands, its
// CLOSED follows its EOSE, as for any early answer the store refuses.)
func (r *Registry) awaitAnswered(ctx context.Context, row session.NewSubscription, lim session.Limits) {
	key := roomKey(row.Community, row.Pubkey)
	drained := r.room.undrained(row.Connection, key, lim)
	if drained == nil { // the common case: no timer made
		return
	}
	timer := time.NewTimer(answeredWait)
	defer timer.Stop()
	for ; drained != nil; drained = r.room.undrained(row.Connection, key, lim) {
		select {
		case <-drained:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// undrained is what to wait on (awaitAnswered) for a REQ of conn and key
// under lim: nil when neither has early answers pending here past half
// its limit.
func (rs *rooms) undrained(conn, key string, lim session.Limits) chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, x := range [2]struct {
		id    string
		limit int
	}{{conn, lim.PerConnection}, {key, lim.PerKey}} {
		c := rs.counts[x.id]
		if c == nil || c.early == 0 || x.limit <= 0 || 2*(c.held+c.storing+1) <= x.limit {
			continue
		}
		if c.drained == nil {
			c.drained = make(chan struct{})
		}
		return c.drained
	}
	return nil
}

// verdict is the refusal, or the failure, a store's Subscribe error
// means for row under lim.
func (r *Registry) verdict(err error, row session.NewSubscription, lim session.Limits) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrConnectionFull):
		return Full(lim.PerConnection, ClientSub(row.Sub))
	case errors.Is(err, session.ErrKeyFull):
		return KeyFull(lim.PerKey, ClientSub(row.Sub))
	}
	return fmt.Errorf("sessions: %w", err)
}

// storing counts a subscription being stored without a reservation.
func (r *Registry) storing(conn, key string) *Reservation {
	now := r.now()
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	for _, id := range []string{conn, key} {
		if c := r.room.entry(id, now); c != nil {
			c.storing++
		}
	}
	return &Reservation{conn: conn, key: key}
}

// entry is id's count, made when missing (nil when roomMax counts are in
// use even after the stale ones were dropped). Callers hold mu.
func (rs *rooms) entry(id string, now time.Time) *roomCount {
	if c := rs.counts[id]; c != nil {
		return c
	}
	if rs.counts == nil {
		rs.counts = map[string]*roomCount{}
	}
	if len(rs.counts) >= roomMax {
		for id, c := range rs.counts {
			if now.Sub(c.at) >= roomFresh && c.storing == 0 {
				delete(rs.counts, id)
			}
		}
		if len(rs.counts) >= roomMax {
			return nil
		}
	}
	c := &roomCount{}
	rs.counts[id] = c
	return c
}

// Release hands back res, reserved for a subscription that will not be
// stored (its REQ was closed, or failed, before its store began).
func (r *Registry) Release(res *Reservation) {
	if res == nil {
		return
	}
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	r.room.release(res)
}

// Supersede ends the wait of an early answer pending here for sub of
// connection, if any: its id was closed, or asked for again (a REQ that
// replaces it), so it must not be stored after all (Superseded); its
// place is handed back now.
func (r *Registry) Supersede(connection, sub string) {
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	if res := r.room.pending[pendingKey(connection, sub)]; res != nil {
		r.room.supersede(res)
	}
}

// Superseded reports whether res's id was closed or asked for again on
// this instance since it was reserved (Supersede).
func (r *Registry) Superseded(res *Reservation) bool {
	if res == nil {
		return false
	}
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	return res.superseded
}

// supersede marks res superseded and hands it back. Callers hold mu.
func (rs *rooms) supersede(res *Reservation) {
	res.superseded = true
	rs.release(res)
}

// release hands res back once. Callers hold mu.
func (rs *rooms) release(res *Reservation) {
	if res.done {
		return
	}
	res.done = true
	if res.sub != "" && rs.pending[pendingKey(res.conn, res.sub)] == res {
		delete(rs.pending, pendingKey(res.conn, res.sub))
	}
	for _, id := range []string{res.conn, res.key} {
		c := rs.counts[id]
		if c == nil {
			continue
		}
		if c.storing > 0 {
			c.storing--
		}
		if res.early && c.early > 0 {
			c.early--
			if c.early == 0 && c.drained != nil {
				close(c.drained)
				c.drained = nil
			}
		}
	}
}

// learn records the counts the store reported, and the connection's ids.
func (r *Registry) learn(conn, key string, held session.Held) {
	now := r.now()
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	for _, x := range [2]struct {
		id string
		n  int
	}{{conn, held.Connection}, {key, held.Key}} {
		if x.n <= 0 {
			continue
		}
		c := r.room.entry(x.id, now)
		if c == nil {
			continue
		}
		n := x.n
		// Stores answer out of order: a fresh count only rises here
		// (a CLOSE through this registry lowers it, closed), and a
		// fresh set of ids only grows.
		fresh := now.Sub(c.at) < roomFresh
		if fresh {
			n = max(n, c.held)
		}
		if x.id == conn && held.Subs != nil {
			if !fresh || c.ids == nil {
				c.ids = map[string]bool{}
			}
			for _, s := range held.Subs {
				c.ids[s] = true
			}
		}
		c.held, c.at = n, now
	}
}

// closed records that connection holds one subscription less, sub (its
// key's count is left as it was: higher, the safe side).
func (r *Registry) closed(connection, sub string) {
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	if c := r.room.counts[connection]; c != nil {
		if c.held > 0 {
			c.held--
		}
		delete(c.ids, sub)
	}
}

// forgetRoom drops what is known of connection.
func (r *Registry) forgetRoom(connection string) {
	r.room.mu.Lock()
	defer r.room.mu.Unlock()
	if c := r.room.counts[connection]; c != nil && c.drained != nil {
		close(c.drained)
	}
	delete(r.room.counts, connection)
}
