package sessions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Objects is the object store the idle state lives in (the stack's bucket
// through shared/aws/s3blobs; the local S3 server in make dev). It must be
// strongly read-after-write consistent for Put, Get, List and Delete, as
// S3 is.
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) (body []byte, found bool, err error)
	// List returns the keys under prefix in ascending order, at most
	// limit (0: all).
	List(ctx context.Context, prefix string, limit int) ([]string, error)
	Delete(ctx context.Context, key string) error
}

// Idle keeps what lets an open app stay off the database, in an object
// store under one prefix, so that a paused Aurora stays paused while a
// client reconnects and resumes what it has already seen:
//
//   - conn/{id}: a connection's authenticated key and community, written
//     by AUTH (the NIP-42 challenge needs no storage: Challenge derives it
//     from the connection id);
//   - c/{community}/mark/{inverted}: the community's last-commit mark, the
//     highest created_at any commit stored (one key per raise, the highest
//     listed first);
//   - fold/{community}/p/{pubkey}/{conn}.{sub}.{since}: a subscription a
//     REQ answered from the mark, its lowest since in its name, pending
//     until the first commit of the community that may store an event
//     created at or after that since folds it into ws_subscriptions
//     (store.SessionFold) before its audience read; at most
//     relayinfo.MaxSubscriptions per connection and
//     relayinfo.MaxIdleSubscriptionsPerKey per key (one LIST of the key's
//     prefix counts both);
//   - fold/{community}/g/{conn}: a connection whose $disconnect came, its
//     rows deleted by the next commit's fold.
//   - open/{conn}: a connection the greeting reached (Opened), listed by
//     the liveness tick (OpenConnections) until $disconnect or a post
//     answered 410 Gone removes it (Gone); lastopen: when the last one
//     was recorded, so that a tick lists nothing once every connection
//     has outlived API Gateway's 2 hours.
//
// What lives under ConnDir and FoldDir is worth nothing a day later (a
// connection lives two hours): the bucket's lifecycle expires it
// (infra/sessions.go), so what no write or $disconnect deleted does not
// pile up. The marks are kept.
//
// Safe for concurrent use.
type Idle struct {
	obj    Objects
	prefix string
	ch     Challenges
	now    func() time.Time

	mu    sync.Mutex
	marks map[string]int64 // community → a mark known to exist
	// full: community and key → until when (unix ns) this instance refuses
	// the key's REQs from the mark without asking the store (RefuseFor).
	full map[string]int64

	// Latest, when set, is the highest created_at stored in a community
	// (the database): the first mark of a community starts there. Nil: it
	// starts relayinfo.CreatedAtWindow ahead of the clock.
	Latest func(ctx context.Context, community string) (int64, error)
}

// ConnDir and FoldDir are the parts of the layout under the prefix that
// expire (infra/sessions.go's lifecycle rules name them).
const (
	ConnDir = "conn/"
	FoldDir = "fold/"
)

// Workers bounds the object requests one call runs at once (a fold's
// GETs, the DELETEs after its commit, a $disconnect's).
const Workers = 16

// each runs f(0) … f(n-1), at most Workers at once, and joins their
// errors.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, Workers)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// NewIdle keeps the idle state in obj under prefix; ch gives the NIP-42
// challenge of a connection it folds into the database.
func NewIdle(obj Objects, prefix string, ch Challenges) *Idle {
	return &Idle{obj: obj, prefix: prefix, ch: ch, now: time.Now, marks: map[string]int64{}, full: map[string]int64{}}
}

// name encodes a client-chosen or gateway-chosen string as one key segment.
func name(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func unname(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err
}

func (d *Idle) connKey(id string) string { return d.prefix + ConnDir + name(id) }
func (d *Idle) openPrefix() string       { return d.prefix + "open/" }
func (d *Idle) lastOpenKey() string      { return d.prefix + "lastopen" }
func (d *Idle) openKey(id string) string { return d.openPrefix() + name(id) }
func (d *Idle) markPrefix(community string) string {
	return d.prefix + "c/" + name(community) + "/mark/"
}
func (d *Idle) foldPrefix(community string) string { return d.prefix + FoldDir + name(community) + "/" }

// keyPrefix holds a key's pending subscriptions in community, connPrefix
// those of one of its connections.
func (d *Idle) keyPrefix(community, pubkey string) string {
	return d.foldPrefix(community) + "p/" + name(pubkey) + "/"
}
func (d *Idle) connPrefix(community, pubkey, conn string) string {
	return d.keyPrefix(community, pubkey) + name(conn) + "."
}

// subPrefix names the pending subscription sub of a connection: one key,
// this and its lowest since (two while a REQ replacing it with another
// since runs alongside another). name's alphabet has no '.', and a key's
// pending subscriptions are one folder's names (a folder each would cost
// the local S3 server's LISTs).
func (d *Idle) subPrefix(community, pubkey, conn, sub string) string {
	return d.connPrefix(community, pubkey, conn) + name(sub) + "."
}

// subOf is the subPrefix of pending key k.
func subOf(k string) string { return k[:strings.LastIndexByte(k, '.')+1] }
func (d *Idle) goneKey(community, conn string) string {
	return d.foldPrefix(community) + "g/" + name(conn)
}

// markKey orders marks highest first: S3 lists keys in ascending order.
func (d *Idle) markKey(community string, v int64) string {
	return d.markPrefix(community) + fmt.Sprintf("%019d", math.MaxInt64-v)
}

// Mark is the community's last-commit mark: no stored event of it has a
// created_at above it. ok is false when there is none yet (then nothing
// is known and the database answers).
func (d *Idle) Mark(ctx context.Context, community string) (mark int64, ok bool, err error) {
	keys, err := d.obj.List(ctx, d.markPrefix(community), 1)
	if err != nil {
		return 0, false, fmt.Errorf("sessions: read mark of %s: %w", community, err)
	}
	if len(keys) == 0 {
		return 0, false, nil
	}
	inv, err := strconv.ParseInt(strings.TrimPrefix(keys[0], d.markPrefix(community)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("sessions: mark key %s: %w", keys[0], err)
	}
	m := math.MaxInt64 - inv
	d.remember(community, m)
	return m, true, nil
}

func (d *Idle) remember(community string, m int64) {
	d.mu.Lock()
	if m > d.marks[community] {
		d.marks[community] = m
	}
	d.mu.Unlock()
}

// Raise makes the community's mark at least v, before a commit that may
// store events created up to v. The first mark of a community also covers
// the events stored before it (Latest).
func (d *Idle) Raise(ctx context.Context, community string, v int64) error {
	d.mu.Lock()
	known := d.marks[community]
	d.mu.Unlock()
	if known >= v {
		return nil // a mark ≥ v exists: marks never go down
	}
	cur, ok, err := d.Mark(ctx, community)
	if err != nil {
		return err
	}
	if ok && cur >= v {
		return nil
	}
	if !ok {
		first := d.now().Unix() + relayinfo.CreatedAtWindow
		if d.Latest != nil {
			if first, err = d.Latest(ctx, community); err != nil {
				return fmt.Errorf("sessions: first mark of %s: %w", community, err)
			}
		}
		v = max(v, first)
	}
	if err := d.obj.Put(ctx, d.markKey(community, v), nil, ""); err != nil {
		return fmt.Errorf("sessions: raise mark of %s: %w", community, err)
	}
	d.remember(community, v)
	if ok { // the lower key is no longer read
		if err := d.obj.Delete(ctx, d.markKey(community, cur)); err != nil {
			return fmt.Errorf("sessions: drop old mark of %s: %w", community, err)
		}
	}
	return nil
}

// IdleConn is what AUTH keeps of a connection outside the database.
type IdleConn struct {
	Community   string `json:"community"`
	Pubkey      string `json:"pubkey"`
	ConnectedAt int64  `json:"connected_at"`
}

// SaveConn records c as connection id's state (AUTH).
func (d *Idle) SaveConn(ctx context.Context, id string, c IdleConn) error {
	b, _ := json.Marshal(c)
	if err := d.obj.Put(ctx, d.connKey(id), b, "application/json"); err != nil {
		return fmt.Errorf("sessions: save connection %s: %w", id, err)
	}
	return nil
}

// LoadConn returns connection id's state; found is false when there is
// none (the connection has not authenticated, or it is gone).
func (d *Idle) LoadConn(ctx context.Context, id string) (c IdleConn, found bool, err error) {
	b, found, err := d.obj.Get(ctx, d.connKey(id))
	if err != nil || !found {
		return c, false, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, false, fmt.Errorf("sessions: connection %s: %w", id, err)
	}
	return c, true, nil
}

// Gone records that connection id, authenticated as pubkey ("" when it
// never authenticated or is unknown), went away ($disconnect, or a post
// answered 410 Gone): its state and its entry among the open connections
// are dropped and, when its community is known, a mark asks the next
// commit of that community to delete its rows; its pending subscriptions
// are deleted (they no longer count against its key's limit; one a REQ
// still in flight writes after this is dropped unfolded by the mark). No
// database statement.
func (d *Idle) Gone(ctx context.Context, id, community, pubkey string) error {
	if community != "" {
		if err := d.obj.Put(ctx, d.goneKey(community, id), nil, ""); err != nil {
			return fmt.Errorf("sessions: record %s gone: %w", id, err)
		}
		if pubkey != "" {
			if err := d.dropAll(ctx, d.connPrefix(community, pubkey, id)); err != nil {
				return fmt.Errorf("sessions: drop pending of %s: %w", id, err)
			}
			d.roomFor(community, pubkey)
		}
	}
	if err := d.obj.Delete(ctx, d.connKey(id)); err != nil {
		return fmt.Errorf("sessions: drop connection %s: %w", id, err)
	}
	if err := d.obj.Delete(ctx, d.openKey(id)); err != nil {
		return fmt.Errorf("sessions: drop open connection %s: %w", id, err)
	}
	return nil
}

// Opened records connection id among the open connections (the greeting
// reached it), which the liveness tick lists, and the time as the last
// one's. An entry whose $disconnect never came is removed by the first
// liveness post that finds it gone.
func (d *Idle) Opened(ctx context.Context, id string) error {
	if err := d.obj.Put(ctx, d.openKey(id), nil, ""); err != nil {
		return fmt.Errorf("sessions: record %s open: %w", id, err)
	}
	if err := d.obj.Put(ctx, d.lastOpenKey(), []byte(strconv.FormatInt(d.now().Unix(), 10)), "text/plain"); err != nil {
		return fmt.Errorf("sessions: record %s open: %w", id, err)
	}
	return nil
}

// dropAll deletes the objects under prefix.
func (d *Idle) dropAll(ctx context.Context, prefix string) error {
	keys, err := d.obj.List(ctx, prefix, 0)
	if err != nil {
		return err
	}
	return each(len(keys), func(i int) error { return d.obj.Delete(ctx, keys[i]) })
}

// Rekey moves connection conn's pending subscriptions in community from
// key from to key to, when it authenticates again as another key: they
// stay live (as the database path's rows do, with the key they were
// opened by) and its CLOSE, which names the connection's key, finds them.
// Each is written under to before it is deleted under from, so a fold
// lists at least one of the two (folding both changes nothing).
func (d *Idle) Rekey(ctx context.Context, community, conn, from, to string) error {
	keys, err := d.obj.List(ctx, d.connPrefix(community, from, conn), 0)
	if err != nil {
		return fmt.Errorf("sessions: pending of %s: %w", conn, err)
	}
	dir := d.connPrefix(community, from, conn)
	err = each(len(keys), func(i int) error {
		b, found, err := d.obj.Get(ctx, keys[i])
		if err != nil || !found {
			return err
		}
		sub := strings.TrimPrefix(keys[i], dir)
		if err := d.obj.Put(ctx, d.connPrefix(community, to, conn)+sub, b, "application/json"); err != nil {
			return err
		}
		return d.obj.Delete(ctx, keys[i])
	})
	if err != nil {
		return fmt.Errorf("sessions: move pending of %s: %w", conn, err)
	}
	return nil
}

// OpenConnections lists the ids Opened recorded and Gone has not removed:
// none, without listing them, when the last was recorded more than
// Lifetime ago (API Gateway closed it and every one before it), which is
// one GET where a LIST costs twelve times as much.
func (d *Idle) OpenConnections(ctx context.Context) ([]string, error) {
	b, found, err := d.obj.Get(ctx, d.lastOpenKey())
	if err != nil {
		return nil, fmt.Errorf("sessions: last open connection: %w", err)
	}
	if at, perr := strconv.ParseInt(string(b), 10, 64); !found || perr != nil || d.now().Unix() > ExpiresAt(at) {
		return nil, nil
	}
	pre := d.openPrefix()
	keys, err := d.obj.List(ctx, pre, 0)
	if err != nil {
		return nil, fmt.Errorf("sessions: list open connections: %w", err)
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		if id, err := unname(strings.TrimPrefix(k, pre)); err == nil && id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// HostTTL is how long a host's community, as the database last named it,
// is named to a new connection without asking the database again. Whether
// that community is still served is not this entry's: the door
// (shared/service/guard) asks it of every message that reaches the
// database, within the community registry's TTL.
const HostTTL = time.Hour

type hostEntry struct {
	Community string `json:"community"`
	At        int64  `json:"at"`
}

// hostKey is host's entry, by hostname as communities are registered.
func (d *Idle) hostKey(host string) string {
	return d.prefix + "host/" + name(relayurl.Hostname(host))
}

// ForgetHost drops host's entry, so that the next new connection there
// asks the database (which refuses a community no longer served): the
// door, on refusing a message because its community is not served, calls
// it.
func (d *Idle) ForgetHost(ctx context.Context, host string) error {
	if err := d.obj.Delete(ctx, d.hostKey(host)); err != nil {
		return fmt.Errorf("sessions: forget host %s: %w", host, err)
	}
	return nil
}

// Community is the community served at host: as recorded within HostTTL,
// else from resolve (the database), then recorded.
func (d *Idle) Community(ctx context.Context, host string, resolve func(context.Context, string) (string, error)) (string, error) {
	now := d.now().Unix()
	b, found, err := d.obj.Get(ctx, d.hostKey(host))
	if err != nil {
		return "", fmt.Errorf("sessions: community of %s: %w", host, err)
	}
	var e hostEntry
	if found && json.Unmarshal(b, &e) == nil && e.Community != "" && now-e.At < int64(HostTTL/time.Second) {
		return e.Community, nil
	}
	c, err := resolve(ctx, host)
	if err != nil {
		return "", err
	}
	b, _ = json.Marshal(hostEntry{Community: c, At: now})
	if err := d.obj.Put(ctx, d.hostKey(host), b, "application/json"); err != nil {
		return "", fmt.Errorf("sessions: record community of %s: %w", host, err)
	}
	return c, nil
}

// pending is one subscription a REQ answered from the mark.
type pending struct {
	Pubkey      string          `json:"pubkey"`
	Filters     json.RawMessage `json:"filters"`
	Pins        []string        `json:"pins"`
	CreatedAt   int64           `json:"created_at"`
	ConnectedAt int64           `json:"connected_at"`
}

// ErrMoved means the community's mark moved while a REQ was being answered
// from it: the database must answer (the pending subscription stays until
// the database path replaces and drops it).
var ErrMoved = errors.New("sessions: the community's mark moved")

// crowded is the refusal of pending subscription sub (its keys start with
// subPre, its connection's with connPre) among held, the
// keys of its key's pending subscriptions (sub itself, a replaced one,
// does not count): nil when there is room. The connection's limit is the
// database path's (Full); the key's, relayinfo.MaxIdleSubscriptionsPerKey,
// bounds what the key's REQs add to the community's next write.
func crowded(held []string, subPre, connPre, sub string) error {
	subs := map[string]bool{}
	conn := 0
	for _, k := range held {
		dir := subOf(k)
		if dir == subPre || subs[dir] {
			continue
		}
		subs[dir] = true
		if strings.HasPrefix(dir, connPre) {
			conn++
		}
	}
	if conn >= relayinfo.MaxSubscriptions {
		return Full(relayinfo.MaxSubscriptions, sub)
	}
	if len(subs) >= relayinfo.MaxIdleSubscriptionsPerKey {
		return keyFull(sub)
	}
	return nil
}

// RefuseFor is how long an instance that refused a key's REQ from the mark
// rate-limited: refuses its next ones without asking the store, so a key
// flooding REQs past its limit costs no object request (and, on one
// machine, does not crowd the store another key's write asks).
const RefuseFor = time.Second

// known is the highest mark this instance knows exists (0: none).
func (d *Idle) known(community string) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.marks[community]
}

// refusing is the refusal of a REQ of pubkey within RefuseFor of its
// key's last rate-limited: one on this instance, when every since is
// above the marks known (else the database may answer it).
func (d *Idle) refusing(community, pubkey string, filters []nostr.Filter, sub string) error {
	d.mu.Lock()
	until := d.full[community+"\x00"+pubkey]
	d.mu.Unlock()
	if until <= d.now().UnixNano() || !Above(filters, d.known(community)) {
		return nil
	}
	return keyFull(sub)
}

// refuseFor records that pubkey's REQs are refused for RefuseFor when
// refusal is the key's limit.
func (d *Idle) refuseFor(community, pubkey string, refusal error) {
	if r, ok := reject.As(refusal); !ok || r.Prefix != reject.RateLimited {
		return
	}
	now := d.now().UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.full) >= 4096 {
		for k, until := range d.full {
			if until <= now {
				delete(d.full, k)
			}
		}
	}
	d.full[community+"\x00"+pubkey] = now + int64(RefuseFor)
}

// roomFor forgets refuseFor's record of pubkey: one of its pending
// subscriptions went (CLOSE, $disconnect).
func (d *Idle) roomFor(community, pubkey string) {
	d.mu.Lock()
	delete(d.full, community+"\x00"+pubkey)
	d.mu.Unlock()
}

// keyFull is the refusal of a REQ past its key's limit.
func keyFull(sub string) error {
	return reject.New(reject.RateLimited, "a key may hold %d subscriptions for events newer than the community's last one, across its connections; CLOSE one before opening %q, or retry once the next event is published",
		relayinfo.MaxIdleSubscriptionsPerKey, sub)
}

// markAndHeld reads the community's mark and the keys of pubkey's pending
// subscriptions in it (enough to count one more than its limit), at once.
func (d *Idle) markAndHeld(ctx context.Context, community, pubkey string) (mark int64, ok bool, held []string, err error) {
	var errMark, errHeld error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		held, errHeld = d.obj.List(ctx, d.keyPrefix(community, pubkey), 2*relayinfo.MaxIdleSubscriptionsPerKey+2)
	}()
	mark, ok, errMark = d.Mark(ctx, community)
	wg.Wait()
	if errHeld != nil {
		errHeld = fmt.Errorf("sessions: pending of %.12s: %w", pubkey, errHeld)
	}
	return mark, ok, held, errors.Join(errMark, errHeld)
}

// lowestSince is the lowest since of filters (each has one: Above).
func lowestSince(filters []nostr.Filter) int64 {
	low := int64(math.MaxInt64)
	for _, f := range filters {
		if f.Since != nil {
			low = min(low, int64(*f.Since))
		}
	}
	return low
}

// SubscribeIdle answers a REQ of an authenticated connection without the
// database when every filter's since is above the community's mark: no
// stored event can match, so the answer is EOSE alone. It stores the
// subscription as pending (replacing one of the same id), then reads the
// mark again: a commit that raised it in between may have listed the
// pending subscriptions before this one was written, so the database
// answers instead (ErrMoved). A commit that raises it later, to at least
// the subscription's lowest since, folds this one before its audience
// read; one that raises it less leaves it pending (none of its events can
// match), so far-future REQs cost a write nothing but their names in its
// LIST. answered is false (and nothing written) when the mark does not
// allow it.
//
// A REQ past the connection's or the key's limit of pending subscriptions
// (crowded) is refused, with the refusal as err: counted before the
// subscription is written and again after (concurrent REQs of one key
// each see the others; one that finds the limit passed withdraws its
// own), so a key never holds more than its limit for longer than a REQ.
func (d *Idle) SubscribeIdle(ctx context.Context, community string, conn *Connection, sub string, filters []nostr.Filter) (answered bool, err error) {
	if refused := d.refusing(community, conn.Pubkey, filters, sub); refused != nil || !Above(filters, d.known(community)) {
		return false, refused
	}
	m, ok, held, err := d.markAndHeld(ctx, community, conn.Pubkey)
	if err != nil || !ok || !Above(filters, m) {
		return false, err
	}
	connPre := d.connPrefix(community, conn.Pubkey, conn.ID)
	subPre := d.subPrefix(community, conn.Pubkey, conn.ID, sub)
	if err := crowded(held, subPre, connPre, sub); err != nil {
		d.refuseFor(community, conn.Pubkey, err)
		return false, err
	}
	raw, err := json.Marshal(filters)
	if err != nil {
		return false, fmt.Errorf("sessions: encode filters: %w", err)
	}
	own := subPre + strconv.FormatInt(lowestSince(filters), 10)
	for _, k := range held {
		if strings.HasPrefix(k, subPre) && k != own { // replaced
			if err := d.obj.Delete(ctx, k); err != nil {
				return false, fmt.Errorf("sessions: replace pending subscription: %w", err)
			}
		}
	}
	p, _ := json.Marshal(pending{Pubkey: conn.Pubkey, Filters: raw, Pins: Pins(filters),
		CreatedAt: d.now().Unix(), ConnectedAt: conn.ConnectedAt})
	if err := d.obj.Put(ctx, own, p, "application/json"); err != nil {
		return false, fmt.Errorf("sessions: pending subscription: %w", err)
	}
	again, _, held, err := d.markAndHeld(ctx, community, conn.Pubkey)
	if err != nil {
		return false, err
	}
	if refused := crowded(held, subPre, connPre, sub); refused != nil {
		d.refuseFor(community, conn.Pubkey, refused)
		if err := d.obj.Delete(ctx, own); err != nil {
			return false, fmt.Errorf("sessions: withdraw pending subscription: %w", err)
		}
		return false, refused
	}
	if again != m {
		return false, ErrMoved
	}
	return true, nil
}

// DropPending forgets pending subscription sub of connection conn,
// authenticated as pubkey (CLOSE, or a REQ the database answered).
func (d *Idle) DropPending(ctx context.Context, community, pubkey, conn, sub string) error {
	if err := d.dropAll(ctx, d.subPrefix(community, pubkey, conn, sub)); err != nil {
		return fmt.Errorf("sessions: drop pending %s: %w", sub, err)
	}
	d.roomFor(community, pubkey)
	return nil
}

// Above reports whether every filter has a since above mark: then no event
// stored up to the mark matches any of them.
func Above(filters []nostr.Filter, mark int64) bool {
	if len(filters) == 0 {
		return false
	}
	for _, f := range filters {
		if f.Since == nil || int64(*f.Since) <= mark {
			return false
		}
	}
	return true
}

// Fold is what the next commit of a community folds into the database,
// and the keys to delete once it committed.
type Fold struct {
	store.SessionFold
	keys []string
}

// Collect raises the community's mark to at least v (the highest
// created_at the commit may store), then lists what is pending, in that
// order: a REQ that read the mark before the raise and wrote its pending
// subscription after this list reads the raised mark on its re-check. It
// folds the pending subscriptions whose lowest since is at most v (one
// with a higher since matches no event this commit may store, and stays
// for a later commit, which raises the mark to its v before it lists).
//
// Its work is one LIST and one GET per subscription folded, Workers at
// once: at most relayinfo.MaxIdleSubscriptionsPerKey per key, however
// many REQs a key sends. Folding is idempotent (the rows are upserts), so
// what a write that failed or timed out left is folded by the next one at
// the same cost. The NIP-43 gate is asked in the transaction, at each
// subscription's insert (store.SessionFold).
func (d *Idle) Collect(ctx context.Context, community string, v int64) (*Fold, error) {
	if err := d.Raise(ctx, community, v); err != nil {
		return nil, err
	}
	pre := d.foldPrefix(community)
	keys, err := d.obj.List(ctx, pre, 0)
	if err != nil {
		return nil, fmt.Errorf("sessions: list pending of %s: %w", community, err)
	}
	now := d.now().Unix()
	f := &Fold{SessionFold: store.SessionFold{Now: now, MaxSubs: relayinfo.MaxSubscriptions}}
	gone := map[string]bool{}
	type item struct{ key, pubkey, conn, sub string }
	var todo []item
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, pre), "/")
		switch {
		case len(parts) == 2 && parts[0] == "g":
			id, err := unname(parts[1])
			if err != nil {
				continue
			}
			gone[id] = true
			f.Gone = append(f.Gone, id)
			f.keys = append(f.keys, k)
		case len(parts) == 3 && parts[0] == "p" && strings.Count(parts[2], ".") == 2:
			fields := strings.Split(parts[2], ".")
			pubkey, err0 := unname(parts[1])
			id, err1 := unname(fields[0])
			sub, err2 := unname(fields[1])
			since, err3 := strconv.ParseInt(fields[2], 10, 64)
			if err0 != nil || err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			if gone[id] { // listed after its gone mark ("g" < "p"): dropped unfolded
				f.keys = append(f.keys, k)
				continue
			}
			if since > v {
				continue // nothing this commit stores can match it yet
			}
			todo = append(todo, item{k, pubkey, id, sub})
		}
	}
	bodies := make([]*pending, len(todo))
	err = each(len(todo), func(i int) error {
		b, found, err := d.obj.Get(ctx, todo[i].key)
		if err != nil {
			return fmt.Errorf("sessions: read pending %s: %w", todo[i].key, err)
		}
		var p pending
		if found && json.Unmarshal(b, &p) == nil {
			bodies[i] = &p
		} else if found {
			bodies[i] = &pending{} // unreadable
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	conns := map[string]bool{}
	for i, it := range todo {
		p := bodies[i]
		if p == nil {
			continue // folded by a commit that ran alongside
		}
		if p.Pubkey == "" {
			f.keys = append(f.keys, it.key) // unreadable: dropped unfolded
			continue
		}
		if !conns[it.conn] {
			conns[it.conn] = true
			f.Connections = append(f.Connections, Connection{ID: it.conn, Community: community,
				Challenge: d.ch.For(it.conn), ChallengeSent: true, Pubkey: it.pubkey,
				ConnectedAt: p.ConnectedAt, ExpiresAt: ExpiresAt(p.ConnectedAt)})
		}
		f.Subs = append(f.Subs, store.NewSubscription{
			Subscription: store.Subscription{Connection: it.conn, Sub: it.sub, Pubkey: p.Pubkey, Filters: string(p.Filters)},
			Community:    community, Pins: p.Pins, CreatedAt: p.CreatedAt})
		f.keys = append(f.keys, it.key)
	}
	return f, nil
}

// Done deletes what f folded, once its commit went through (Workers at
// once).
func (d *Idle) Done(ctx context.Context, f *Fold) error {
	if err := each(len(f.keys), func(i int) error { return d.obj.Delete(ctx, f.keys[i]) }); err != nil {
		return fmt.Errorf("sessions: drop folded: %w", err)
	}
	return nil
}

// Folder is Collect as the write path's preparation
// (shared/service/ingest.Folder): the fold rides the transaction's BEGIN,
// and what it folded is deleted once it committed (a failed delete is
// logged; the next commit folds the same rows again, which changes
// nothing).
func (d *Idle) Folder(log *slog.Logger) func(ctx context.Context, community string, upTo int64) (func(*store.Tx), func(context.Context), error) {
	return func(ctx context.Context, community string, upTo int64) (func(*store.Tx), func(context.Context), error) {
		f, err := d.Collect(ctx, community, upTo)
		if err != nil {
			return nil, nil, err
		}
		fold := func(tx *store.Tx) { tx.FoldSessions(f.SessionFold) }
		done := func(ctx context.Context) {
			if err := d.Done(ctx, f); err != nil {
				log.WarnContext(ctx, "sessions: folded state not dropped", "community", community, "err", err)
			}
		}
		return fold, done, nil
	}
}
