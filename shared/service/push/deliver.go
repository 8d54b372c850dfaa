package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// claimFor is how long one try holds a delivery: longer than a request
// (push.RequestTimeout), so a duplicate run never sends it at once, and
// short, so the retry of a run that crashed mid-try sends it soon.
const claimFor = push.RequestTimeout + 5*time.Second

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
// later, ErrBadBatch for a payload that is none.
func (s *Service) Deliver(ctx context.Context, payload []byte) error {
	b, err := parseBatch(payload)
	if err != nil {
		return err
	}
	events, err := s.events(ctx, b)
	if err != nil {
		return err
	}
	subs, err := s.live(ctx, b.Community)
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
	if _, err := s.Store.PushDeliveriesInsert(ctx, b.Community, ds, s.now().Unix()); err != nil {
		return err
	}
	return s.sendDue(ctx, b, events)
}

// matches reports whether l matches e (never the subscriber's own event),
// with the filter that matched.
func (s *Service) matches(l *live, e *event) (filter.Filter, bool) {
	if e.ev.PubKey == l.row.Pubkey {
		return filter.Filter{}, false
	}
	return push.Match(l.filters, l.ignore, e.ev, e.Channel)
}

// events loads the batch's stored, not deleted events.
func (s *Service) events(ctx context.Context, b Batch) (map[string]*event, error) {
	stored, err := s.Store.EventsListForPush(ctx, b.Community, b.IDs)
	if err != nil {
		return nil, err
	}
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

// sendDue sends the batch's pending deliveries as they fall due, within the
// run's deadline.
func (s *Service) sendDue(ctx context.Context, b Batch, events map[string]*event) error {
	if err := s.Store.PushRatesDelete(ctx, s.now().Unix()/60-5); err != nil {
		return err
	}
	for {
		now := s.now().Unix()
		pending, err := s.Store.PushDeliveriesListPending(ctx, b.Community, b.IDs, now)
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		var due []store.PendingPush
		next := int64(0)
		for _, p := range pending {
			if p.NextAt <= now {
				due = append(due, p)
			} else if next == 0 || p.NextAt < next {
				next = p.NextAt
			}
		}
		if len(due) > 0 {
			if err := s.sendBatch(ctx, b.Community, due, events); err != nil {
				return err
			}
			continue
		}
		wait := time.Until(time.Unix(next, 0))
		if !s.canStart(ctx, wait) {
			return fmt.Errorf("%w: %d of community %s, next due in %s", ErrPending, len(pending), b.Community, wait.Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// canStart reports whether a try that starts after wait ends, its own
// deadline (push.RequestTimeout) included, before the run's deadline with
// a second to record its outcome: no delivery's deadline outlives the run.
func (s *Service) canStart(ctx context.Context, wait time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || !time.Now().Add(wait+push.RequestTimeout+time.Second).After(dl)
}

// sendBatch re-checks due deliveries, then sends them concurrently: at
// most push.SendConcurrency tries in flight, of which one host
// (sendHost) holds at most push.SendsPerHost, so a slow host delays only
// its own deliveries. ErrPending when the run's deadline left some
// unstarted.
func (s *Service) sendBatch(ctx context.Context, community string, due []store.PendingPush, events map[string]*event) error {
	subs, err := s.live(ctx, community)
	if err != nil {
		return err
	}
	readable, err := s.readable(ctx, community, due, events, subs)
	if err != nil {
		return err
	}
	byHost := map[string][]store.PendingPush{}
	var hosts []string
	for _, p := range due {
		e, l := events[p.EventID], subs[p.PushAddress]
		if e == nil || l == nil || !p.Live || !readable[verdictKey{p.PushAddress, p.EventID}] {
			// The event was deleted, the subscription expired, was
			// replaced, revoked or dropped, or the subscriber may not
			// read the event now: nothing is sent.
			if _, err := s.Store.PushDeliveriesSet(ctx, community, p.PushDelivery, store.PushSkipped, p.Attempts, p.NextAt, s.now().Unix()); err != nil {
				return err
			}
			continue
		}
		h := s.sendHost(p)
		if byHost[h] == nil {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], p)
	}
	pool := make(chan struct{}, max(1, s.concurrency()))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		first    error
		deferred int
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	// Hosts in the order their first delivery fell due; within a host,
	// its deliveries in order, push.SendsPerHost at a time.
	for _, h := range hosts {
		slots := make(chan struct{}, push.SendsPerHost)
		wg.Add(1)
		go func(ds []store.PendingPush) {
			defer wg.Done()
			var hw sync.WaitGroup
			for _, p := range ds {
				slots <- struct{}{}
				pool <- struct{}{}
				if !s.canStart(ctx, 0) {
					<-pool
					<-slots
					mu.Lock()
					deferred++
					mu.Unlock()
					continue
				}
				hw.Add(1)
				go func(p store.PendingPush) {
					defer func() { <-pool; <-slots; hw.Done() }()
					if err := s.sendOne(ctx, community, p, subs[p.PushAddress], events[p.EventID]); err != nil {
						fail(err)
					}
				}(p)
			}
			hw.Wait()
		}(byHost[h])
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if deferred > 0 {
		return fmt.Errorf("%w: %d of community %s not started before the run's deadline", ErrPending, deferred, community)
	}
	return nil
}

// sendOne takes one due delivery (the claim: no other run sends it while
// this try lasts), counts it against its rates (over one, it waits for
// the next minute, no attempt counted) and tries it.
func (s *Service) sendOne(ctx context.Context, community string, p store.PendingPush, l *live, e *event) error {
	now := s.now().Unix()
	ok, err := s.Store.PushDeliveriesClaim(ctx, community, p.PushDelivery, now, now+int64(claimFor/time.Second))
	if err != nil || !ok {
		return err // !ok: another run has it
	}
	took, err := s.Store.PushRatesTake(ctx, now/60, s.rates(community, p))
	if err != nil {
		return err
	}
	if !took {
		_, err := s.Store.PushDeliveriesSet(ctx, community, p.PushDelivery, store.PushPending, p.Attempts, (now/60+1)*60, now)
		return err
	}
	return s.try(ctx, community, p, l, e)
}

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
