package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// claimFor is how long one try holds a delivery (store.PushClaim): the
// request's own deadline (push.RequestTimeout) and room to record its
// outcome with a busy pool, so that no other run sends it while the try may
// still be running, and short, so the retry of a run that crashed mid-try
// sends it soon.
const claimFor = push.RequestTimeout + 10*time.Second

// pollEvery is how often a run that still has work of its own looks for
// events stored after its batch (adopt) and for deliveries that fell due.
const pollEvery = 250 * time.Millisecond

// adoptMax bounds the events one run takes on besides its own batch.
const adoptMax = 4 * MaxBatchIDs

// ErrPending is Deliver's answer when deliveries of the batch are still
// due later than this run can wait: the invocation fails and Lambda runs
// it again (its retries, then the on-failure destination).
var ErrPending = errors.New("push: deliveries still pending")

// live is one live subscription prepared for matching.
type live struct {
	row             store.PushSubscription
	filters, ignore []nostr.Filter
}

// event is one stored event of the batch.
type event struct {
	ev *nostr.Event
	store.PushEvent
}

// Deliver is the sender function: it matches the batch (payload, a
// Batch) and sends its due deliveries until none is pending, waiting for
// retries while the run's deadline allows; ErrPending when some stay due
// later, ErrBadBatch for a payload that is none. While its own work lasts
// the run also takes on events stored after its batch (adopt), so that one
// instance busy with slow receivers still serves what commits meanwhile.
func (s *Service) Deliver(ctx context.Context, payload []byte) error {
	b, err := parseBatch(payload)
	if err != nil {
		return err
	}
	stored, err := s.Store.EventsListForPush(ctx, b.Community, b.IDs)
	if err != nil {
		return err
	}
	events, err := toEvents(stored)
	if err != nil {
		return err
	}
	if err := s.match(ctx, b.Community, events); err != nil {
		return err
	}
	if err := s.Store.PushRatesDelete(ctx, s.now().Unix()/60-5); err != nil {
		return err
	}
	r := &run{s: s, community: b.Community, own: map[string]bool{}, events: events,
		flying: map[verdictKey]time.Time{}, hosts: map[string]int{}, slow: map[string]bool{}, results: make(chan tried)}
	for _, id := range b.IDs {
		r.own[id] = true
	}
	for _, e := range events {
		r.xact = max(r.xact, e.Xact)
	}
	return r.loop(ctx)
}

// match stores one pending delivery per (event of events, live
// subscription it matches); one already stored is left as it is.
func (s *Service) match(ctx context.Context, community string, events map[string]*event) error {
	if len(events) == 0 {
		return nil
	}
	subs, err := s.live(ctx, community)
	if err != nil {
		return err
	}
	var ds []store.PushDelivery
	for _, e := range events {
		for _, l := range subs {
			if _, ok := s.matches(l, e); ok {
				ds = append(ds, store.PushDelivery{EventID: e.ID, PushAddress: l.row.Address(), Target: l.row.Target})
			}
		}
	}
	_, err = s.Store.PushDeliveriesInsert(ctx, community, ds, s.now().Unix())
	return err
}

// matches reports whether l matches e (never the subscriber's own event),
// with the filter that matched.
func (s *Service) matches(l *live, e *event) (filter.Filter, bool) {
	if e.ev.PubKey == l.row.Pubkey {
		return filter.Filter{}, false
	}
	return push.Match(l.filters, l.ignore, e.ev, e.Channel)
}

// toEvents parses stored events.
func toEvents(stored map[string]store.PushEvent) (map[string]*event, error) {
	out := make(map[string]*event, len(stored))
	for id, pe := range stored {
		var ev nostr.Event
		if err := json.Unmarshal([]byte(pe.Raw), &ev); err != nil {
			return nil, fmt.Errorf("push: stored event %s: %w", id, err)
		}
		out[id] = &event{ev: &ev, PushEvent: pe}
	}
	return out, nil
}

// live loads community's live subscriptions keyed by address.
func (s *Service) live(ctx context.Context, community string) (map[store.PushAddress]*live, error) {
	rows, err := s.Store.PushSubscriptionsListLive(ctx, community, s.now().Unix())
	if err != nil {
		return nil, err
	}
	out := make(map[store.PushAddress]*live, len(rows))
	for _, r := range rows {
		l := &live{row: r}
		if err := json.Unmarshal(r.Filters, &l.filters); err != nil {
			s.log().WarnContext(ctx, "push: stored filters", "pubkey", r.Pubkey, "d", r.D, "err", err)
			continue
		}
		if len(r.Ignore) > 0 {
			if err := json.Unmarshal(r.Ignore, &l.ignore); err != nil {
				s.log().WarnContext(ctx, "push: stored ignore filters", "pubkey", r.Pubkey, "d", r.D, "err", err)
				continue
			}
		}
		out[r.Address()] = l
	}
	return out, nil
}

// run is one invocation's sending: its batch's deliveries, and those of
// the events it took on, each try on a goroutine of its own.
type run struct {
	s         *Service
	community string
	own       map[string]bool   // the batch's event ids
	events    map[string]*event // the batch's and the adopted events
	xact      int64             // the newest storing transaction seen
	adopted   int
	polled    time.Time
	ownLeft   bool // at the last listing, the batch had pending deliveries
	deferred  bool // a due delivery of the batch could not start before the deadline

	flying  map[verdictKey]time.Time // tries in flight, since when
	hosts   map[string]int           // tries in flight per sendHost
	slow    map[string]bool          // hosts whose last try took over slowAfter
	results chan tried
}

// slowAfter: a try that takes longer marks its host slow for the rest of
// the run (run.start).
const slowAfter = time.Second

// tried is one try's end.
type tried struct {
	key  verdictKey
	host string
	took time.Duration
	err  error
}

// loop sends due deliveries as they fall due and as the hosts' and the
// pool's shares free (at most push.SendConcurrency tries in flight, of
// which push.SendsPerHost on one callback host, so a slow host delays only
// its own deliveries, and push.SendsToGateway wakes), until none of the batch is pending and no try is in
// flight; ErrPending when some of the batch stays due later than the
// run's deadline allows.
func (r *run) loop(ctx context.Context) error {
	var failed error
	for {
		if failed == nil && ctx.Err() == nil {
			if err := r.step(ctx); err != nil {
				failed = err
			}
		}
		if len(r.flying) == 0 {
			switch {
			case failed != nil:
				return failed
			case ctx.Err() != nil:
				return ctx.Err()
			case !r.ownLeft:
				return nil
			case r.deferred:
				return fmt.Errorf("%w: of community %s, not started before the run's deadline", ErrPending, r.community)
			}
			next, err := r.nextDue(ctx)
			if err != nil {
				return err
			}
			if next == 0 {
				continue // finished meanwhile, or due now
			}
			if wait := time.Until(time.Unix(next, 0)); !r.s.canStart(ctx, wait) {
				return fmt.Errorf("%w: of community %s, next due in %s", ErrPending, r.community, wait.Round(time.Second))
			}
		}
		select {
		case t := <-r.results:
			r.land(t, &failed)
		case <-time.After(pollEvery):
		case <-ctx.Done():
			for len(r.flying) > 0 {
				r.land(<-r.results, &failed)
			}
		}
	}
}

// land records one try's end.
func (r *run) land(t tried, failed *error) {
	delete(r.flying, t.key)
	r.hosts[t.host]--
	r.slow[t.host] = t.took > slowAfter
	if t.err != nil && *failed == nil {
		*failed = t.err
	}
}

// ids are the events whose deliveries the run sends.
func (r *run) ids() []string {
	out := make([]string, 0, len(r.own)+len(r.events))
	for id := range r.own {
		out = append(out, id)
	}
	for id := range r.events {
		if !r.own[id] {
			out = append(out, id)
		}
	}
	return out
}

// step takes on what was stored meanwhile, then starts every due delivery
// that is not in flight and may start now.
func (r *run) step(ctx context.Context) error {
	if err := r.adopt(ctx); err != nil {
		return err
	}
	now := r.s.now().Unix()
	pending, err := r.s.Store.PushDeliveriesListPending(ctx, r.community, r.ids(), now)
	if err != nil {
		return err
	}
	r.ownLeft = false
	var due []store.PendingPush
	for _, p := range pending {
		if r.own[p.EventID] {
			r.ownLeft = true
		}
		if _, ok := r.flying[verdictKey{p.PushAddress, p.EventID}]; !ok && p.NextAt <= now {
			due = append(due, p)
		}
	}
	if len(due) == 0 {
		return nil
	}
	return r.start(ctx, due)
}

// nextDue is when the batch's first pending delivery falls due (0: one is
// due now, or none is pending).
func (r *run) nextDue(ctx context.Context) (int64, error) {
	now := r.s.now().Unix()
	own := make([]string, 0, len(r.own))
	for id := range r.own {
		own = append(own, id)
	}
	pending, err := r.s.Store.PushDeliveriesListPending(ctx, r.community, own, now)
	if err != nil {
		return 0, err
	}
	next := int64(0)
	for _, p := range pending {
		if p.NextAt <= now {
			return 0, nil
		}
		if next == 0 || p.NextAt < next {
			next = p.NextAt
		}
	}
	return next, nil
}

// adopt takes on, at most every pollEvery while the run is held anyway
// (its batch still has work, or a try has been in flight over slowAfter),
// the events stored after the newest the run has seen
// (store.EventsListForPushAfter): it matches them as their own run will
// (the deliveries are stored once) and sends their due deliveries with its
// own. Their own runs still come, and find sent what this one sent; what
// this one leaves pending (a retry later, a slow host's) is theirs.
func (r *run) adopt(ctx context.Context) error {
	if r.xact == 0 || !r.held() || r.adopted >= adoptMax || time.Since(r.polled) < pollEvery {
		return nil
	}
	r.polled = time.Now()
	stored, err := r.s.Store.EventsListForPushAfter(ctx, r.community, r.xact, MaxBatchIDs)
	if err != nil || len(stored) == 0 {
		return err
	}
	evs, err := toEvents(stored)
	if err != nil {
		return err
	}
	for id, e := range evs {
		r.xact = max(r.xact, e.Xact)
		if r.events[id] != nil {
			delete(evs, id)
		}
	}
	if err := r.s.match(ctx, r.community, evs); err != nil {
		return err
	}
	for id, e := range evs {
		r.events[id] = e
	}
	r.adopted += len(evs)
	return nil
}

// held reports whether the run cannot end soon: its batch has work left
// (at the last listing; before the first, it has), or a try has been in
// flight over slowAfter.
func (r *run) held() bool {
	if r.ownLeft || r.polled.IsZero() {
		return true
	}
	for _, since := range r.flying {
		if time.Since(since) > slowAfter {
			return true
		}
	}
	return false
}

// start re-checks due deliveries (the subscription still stands and its
// subscriber may read the event now; else skipped, nothing sent) and
// starts a try of each whose host and the pool have room, in order; the
// rest wait for a later step.
func (r *run) start(ctx context.Context, due []store.PendingPush) error {
	s := r.s
	subs, err := s.live(ctx, r.community)
	if err != nil {
		return err
	}
	readable, err := s.readable(ctx, r.community, due, r.events, subs)
	if err != nil {
		return err
	}
	for _, p := range due {
		k := verdictKey{p.PushAddress, p.EventID}
		e, l := r.events[p.EventID], subs[p.PushAddress]
		if e == nil || l == nil || !p.Live || !readable[k] {
			// The event was deleted, the subscription expired, was
			// replaced, revoked or dropped, or the subscriber may not
			// read the event now: nothing is sent.
			if _, err := s.Store.PushDeliveriesSetSkipped(ctx, r.community, p.PushDelivery, s.now().Unix()); err != nil {
				return err
			}
			continue
		}
		h := s.sendHost(p)
		share := push.SendsPerHost
		if p.Kind == kinds.PushLease {
			share = push.SendsToGateway
		}
		if r.hosts[h] >= share || len(r.flying) >= max(1, s.concurrency()) {
			continue
		}
		if !r.ownLeft && r.slow[h] {
			// The batch is done: an adopted delivery to a host that was
			// slow is left to its own run, so this run ends.
			continue
		}
		if !s.canStart(ctx, 0) {
			if r.own[p.EventID] {
				r.deferred = true
			}
			continue
		}
		r.flying[k] = time.Now()
		r.hosts[h]++
		go func() {
			t0 := time.Now()
			err := s.sendOne(ctx, r.community, p, l, e)
			r.results <- tried{key: k, host: h, took: time.Since(t0), err: err}
		}()
	}
	return nil
}

// canStart reports whether a try that starts after wait ends, its own
// deadline (push.RequestTimeout, and the hop to a dialer function)
// included, before the run's deadline with a second to record its
// outcome: no delivery's deadline outlives the run.
func (s *Service) canStart(ctx context.Context, wait time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || !time.Now().Add(wait+s.tryTimeout()+time.Second).After(dl)
}

// tryTimeout bounds one try's request: push.RequestTimeout, plus the hop
// when a dialer function makes it (Remote).
func (s *Service) tryTimeout() time.Duration {
	if _, remote := s.Dialer.(Remote); remote {
		return claimFor - recordMargin
	}
	return push.RequestTimeout
}

// sendOne claims one due delivery and counts it against its rates, in one
// transaction committed before anything is sent (store.PushDeliveriesClaim:
// no other run or goroutine sends it while the claim stands; over a rate,
// it waits for the next minute, no attempt counted), then tries it.
func (s *Service) sendOne(ctx context.Context, community string, p store.PendingPush, l *live, e *event) error {
	now := s.now().Unix()
	c, res, err := s.Store.PushDeliveriesClaim(ctx, community, p.PushDelivery, now, now+int64(claimFor/time.Second), now/60, s.rates(community, p))
	if err != nil || res != store.PushClaimTaken {
		return err // held: another run has it, or it is no longer due
	}
	return s.try(ctx, community, c, p, l, e, time.Unix(now, 0).Add(claimFor-recordMargin))
}

// recordMargin is the part of a claim (claimFor) kept for recording the
// outcome: no request runs past claimFor - recordMargin from the claim.
const recordMargin = 2 * time.Second

// rates are the caps p's try counts against.
func (s *Service) rates(community string, p store.PendingPush) []store.PushRate {
	var rs []push.Rate
	if p.Kind == kinds.PushLease {
		rs = push.WakeRates(community, p.Target)
	} else {
		rs = push.CallbackRates(community, p.Target)
	}
	out := make([]store.PushRate, len(rs))
	for i, r := range rs {
		out[i] = store.PushRate{Scope: r.Scope, PerMinute: r.PerMinute}
	}
	return out
}

// sendHost is the host p's try connects to: the callback's (push.RateHost)
// or, for a wake, the gateway's.
func (s *Service) sendHost(p store.PendingPush) string {
	if p.Kind == kinds.PushLease {
		return "gateway"
	}
	return "host/" + push.RateHost(p.Target)
}

func (s *Service) concurrency() int {
	if s.Concurrency > 0 {
		return s.Concurrency
	}
	return push.SendConcurrency
}

// verdictKey names one due delivery: a subscription and an event. The
// verdict is per subscription, never per key: a system channel's event is
// readable only through a filter that names the channel (access.Shows), so
// one key's two subscriptions may get different answers for one event.
type verdictKey struct {
	addr  store.PushAddress
	event string
}

// readable answers, for each due delivery (verdictKey), whether its
// subscriber may read the event now: the door admits the key, and the
// access rule (access.MaySee over store.ChannelsCheckReadable, or ChannelsCheckMetadataReadable for
// the channel-state kinds, through the filter that matched) lets it see
// the event, as live delivery decides.
func (s *Service) readable(ctx context.Context, community string, due []store.PendingPush, events map[string]*event, subs map[store.PushAddress]*live) (map[verdictKey]bool, error) {
	var readers []string
	seenReader := map[string]bool{}
	var pairs, metaPairs []records.ReadPair
	seenPair := map[records.ReadPair]bool{}
	for _, p := range due {
		e := events[p.EventID]
		if e == nil || subs[p.PushAddress] == nil {
			continue
		}
		if !seenReader[p.Pubkey] {
			seenReader[p.Pubkey] = true
			readers = append(readers, p.Pubkey)
		}
		if e.Channel == "" {
			continue
		}
		rp := records.ReadPair{Channel: e.Channel, Reader: p.Pubkey}
		if !seenPair[rp] {
			seenPair[rp] = true
			if kinds.ChannelState(e.ev.Kind) {
				metaPairs = append(metaPairs, rp)
			} else {
				pairs = append(pairs, rp)
			}
		}
	}
	var refused map[string]bool
	if s.Door != nil && len(readers) > 0 {
		why, err := s.Door.Readers(ctx, community, readers)
		if err != nil {
			return nil, fmt.Errorf("push: readers at the door: %w", err)
		}
		refused = make(map[string]bool, len(why))
		for k := range why {
			refused[k] = true
		}
	}
	reach, err := s.Store.ChannelsCheckReadable(ctx, community, pairs)
	if err != nil {
		return nil, err
	}
	meta, err := s.Store.ChannelsCheckMetadataReadable(ctx, community, metaPairs)
	if err != nil {
		return nil, err
	}
	out := map[verdictKey]bool{}
	for _, p := range due {
		e, l := events[p.EventID], subs[p.PushAddress]
		if e == nil || l == nil || refused[p.Pubkey] {
			continue
		}
		f, ok := s.matches(l, e)
		if !ok {
			continue
		}
		rp := records.ReadPair{Channel: e.Channel, Reader: p.Pubkey}
		chReach := reach[rp]
		if kinds.ChannelState(e.ev.Kind) {
			chReach = meta[rp]
		}
		inChannel := e.Channel != ""
		channelReadable := inChannel && chReach && access.Shows(e.System, access.Names(&f, e.Channel))
		if access.MaySee(e.ev, p.Pubkey, inChannel, channelReadable) {
			out[verdictKey{p.PushAddress, p.EventID}] = true
		}
	}
	return out, nil
}
