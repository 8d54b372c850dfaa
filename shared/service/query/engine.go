// Package query is the relay's read engine: NIP-01 filters with the relay's
// access and system-channel rules, the Buzz bridge extensions (before_id,
// page, NIP-50 search), the channel window (top_level, kinds 39005/39006,
// spec/bridge-channel-window.md), the thread panel (depth_limit) and COUNT.
// HTTP /query and /count and WebSocket REQ/COUNT all read through it. It
// plans and decides; every statement it runs is shared/store's (a Snapshot
// per response, Store.Count for COUNT).
package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Engine answers read requests. It is safe for concurrent use.
type Engine struct {
	st  *store.Store
	sg  signer.Signer
	now func() time.Time
	// auxPage is the page size each aux hop drains with (the DB clamp).
	auxPage int
	// httpBudget bounds the event bytes of one POST /query answer.
	httpBudget int
	// trace, when set (tests), sees every statement a request runs.
	trace store.Trace
}

// New builds the read engine over st; overlays are signed with sg.
func New(st *store.Store, sg signer.Signer) *Engine {
	return &Engine{st: st, sg: sg, now: time.Now, auxPage: plainMaxLimit, httpBudget: relayinfo.MaxHTTPResponseLength}
}

// request is one parsed and validated request: window filters first, then
// the others in request order.
type request struct {
	windows []*windowPlan
	others  []plan
	filters []*bridgeFilter // every filter, for the request-wide rules (refused)
}

// plan is a validated window, thread or plain filter.
type plan interface {
	serve(ctx context.Context, e *Engine, s *store.Snapshot, out *output) error
	counted() store.Countable // the read COUNT counts
}

// newRequest validates filters before any database work, so every 400 is
// decided up front.
func newRequest(fs []*bridgeFilter, plainDefault int64) (*request, error) {
	if err := searchAlone(fs); err != nil {
		return nil, err
	}
	req := &request{filters: fs}
	threadWindows := 0
	for i, f := range fs {
		switch {
		case f.ThreadWindow:
			if threadWindows++; threadWindows > MaxThreadWindows {
				return nil, invalid("at most %d thread windows per query", MaxThreadWindows)
			}
			t, err := newThreadWindowPlan(f)
			if err != nil {
				return nil, at(i, err)
			}
			req.others = append(req.others, t)
		case f.TopLevel:
			w, err := newWindowPlan(f)
			if err != nil {
				return nil, at(i, err)
			}
			req.windows = append(req.windows, w)
		case f.DepthLimit != nil:
			t, err := newThreadPlan(f)
			if err != nil {
				return nil, at(i, err)
			}
			req.others = append(req.others, t)
		default:
			p, err := newPlainPlan(f, plainDefault)
			if err != nil {
				return nil, at(i, err)
			}
			req.others = append(req.others, p)
		}
	}
	return req, nil
}

// searchAlone refuses a request that mixes NIP-50 search filters with
// others, as Buzz does: a search is a one-shot read of its own.
func searchAlone(fs []*bridgeFilter) error {
	n := 0
	for _, f := range fs {
		if f.Searches() {
			n++
		}
	}
	if n > 0 && n < len(fs) {
		return invalid("mixed search and non-search filters: send the search in a request of its own")
	}
	return nil
}

// IsSearch reports whether a WebSocket filter is a NIP-50 search (a
// one-shot subscription: nothing live after EOSE).
func IsSearch(f nostr.Filter) bool { return filter.Searches(f.Search) }

func at(i int, err error) error {
	return invalid("filter %d: %s", i, reasonOf(err))
}

// Query serves POST /query: body is a JSON array of filters with bridge
// extensions. It returns the flat array of events, each once. host is the
// hostname the request reached the community at (a thread window's 39007
// binds it).
func (e *Engine) Query(ctx context.Context, community, host, reader string, body []byte) ([]json.RawMessage, error) {
	fs, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	req, err := newRequest(fs, plainMaxLimit)
	if err != nil {
		return nil, err
	}
	req.at(host)
	return e.serveWithin(ctx, community, reader, req, e.httpBudget)
}

// ThreadWindows serves a WebSocket REQ whose filters (raw, as the client
// sent them: go-nostr's filter drops the extension) ask for thread
// windows: the same plans, keyset, access rule and relay-signed 39007 as on
// POST /query. Every filter must be a thread window (Buzz closes a REQ
// mixing them with other filters). No byte budget: the WebSocket codec
// sends each event as a message of its own.
func (e *Engine) ThreadWindows(ctx context.Context, community, host, reader string, filters []json.RawMessage) ([]json.RawMessage, error) {
	fs, err := parseEach(filters, parseFilter)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if !f.ThreadWindow {
			return nil, invalid("mixed thread_window and other filters: send the thread windows in a REQ of their own")
		}
	}
	req, err := newRequest(fs, plainMaxLimit)
	if err != nil {
		return nil, err
	}
	req.at(host)
	return e.serve(ctx, community, reader, req)
}

// IsThreadWindow reports whether a raw filter opts in to a thread window:
// a "thread_window" field that is not false (absent or false is a plain
// filter, as Buzz has it; any other value is then refused by the plan).
func IsThreadWindow(raw json.RawMessage) bool {
	var probe struct {
		ThreadWindow json.RawMessage `json:"thread_window"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	v := bytes.TrimSpace(probe.ThreadWindow)
	return len(v) > 0 && string(v) != "false" && string(v) != "null"
}

// refused is the request-wide rule that depends on the reader: a filter
// asking only for other keys' NIP-ER reminders (access.OthersReminders) is
// refused with restricted:, as NIP-ER asks, on every read path.
func (r *request) refused(reader string) error {
	for i, f := range r.filters {
		if access.OthersReminders(&f.Filter, reader) {
			return reject.Restrictedf("filter %d: reminders (kind %d) are readable only by their author", i, kinds.EventReminder)
		}
	}
	return nil
}

// at records the host the request reached on the plans that bind it.
func (r *request) at(host string) {
	for _, p := range r.others {
		if t, ok := p.(*threadWindowPlan); ok {
			t.host = host
		}
	}
}

// Count serves POST /count: the number of distinct events matching any of
// the filters, under the same access and system-channel rules as Query.
func (e *Engine) Count(ctx context.Context, community, reader string, body []byte) (int64, error) {
	fs, err := parseBody(body)
	if err != nil {
		return 0, err
	}
	req, err := newRequest(fs, plainMaxLimit)
	if err != nil {
		return 0, err
	}
	return e.count(ctx, community, reader, req)
}

// Req serves a WebSocket REQ: plain NIP-01 filters, default limit and clamp
// 1000, the same access and system-channel rules. The events of all filters
// come newest first, (created_at DESC, id ASC), each once.
func (e *Engine) Req(ctx context.Context, community, reader string, filters []nostr.Filter) ([]json.RawMessage, error) {
	return e.reqPlain(ctx, community, reader, filters, nil)
}

// ReqSeen is Req with the snapshot its read saw (store.Seen): what a
// catch-up asks to be beyond (CommittedAfter).
func (e *Engine) ReqSeen(ctx context.Context, community, reader string, filters []nostr.Filter) ([]json.RawMessage, store.Seen, error) {
	var seen store.Seen
	evs, err := e.reqPlain(ctx, community, reader, filters, &seen)
	if err != nil {
		return nil, store.Seen{}, err
	}
	return evs, seen, nil
}

// reqPlain validates filters and reads them in one round trip
// (store.ReadPlain: the snapshot into seen when not nil).
func (e *Engine) reqPlain(ctx context.Context, community, reader string, filters []nostr.Filter, seen *store.Seen) ([]json.RawMessage, error) {
	ps, err := nostrPlans(filters, reader)
	if err != nil {
		return nil, err
	}
	reads := make([]*store.PlainRead, len(ps))
	for i, p := range ps {
		reads[i] = p.read()
	}
	rows, err := e.st.ReadPlain(e.traced(ctx), community, reader, reads, seen)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, len(reads) > 1), nil
}

// CommittedAfter are the stored events of community committed after a
// read under seen (store.EventsListCommittedAfter), as stored.
func (e *Engine) CommittedAfter(ctx context.Context, community string, seen store.Seen) ([]string, error) {
	return e.st.EventsListCommittedAfter(e.traced(ctx), community, seen)
}

// collectRows is the answer of a REQ's reads: each event once, newest
// first when several reads answered.
func collectRows(rows [][]records.Row, several bool) []json.RawMessage {
	out := &output{seen: map[string]bool{}, events: []json.RawMessage{}}
	for _, rs := range rows {
		for _, r := range rs {
			out.add(r.ID, r.Raw)
		}
	}
	if several {
		newestFirst(out.events)
	}
	return out.events
}

// CountFilters serves a WebSocket COUNT.
func (e *Engine) CountFilters(ctx context.Context, community, reader string, filters []nostr.Filter) (int64, error) {
	req, err := nostrRequest(filters)
	if err != nil {
		return 0, err
	}
	return e.count(ctx, community, reader, req)
}

// filterCount refuses a request of more than limit filters.
func filterCount(n, limit int) error {
	if n > limit {
		return invalid("%d filters, the limit is %d", n, limit)
	}
	return nil
}

// parseEach parses a WebSocket message's filters (at most
// relayinfo.MaxFilters) with parse; a refusal names the filter.
func parseEach[T any](filters []T, parse func(T) (*bridgeFilter, error)) ([]*bridgeFilter, error) {
	if err := filterCount(len(filters), relayinfo.MaxFilters); err != nil {
		return nil, err
	}
	fs := make([]*bridgeFilter, len(filters))
	for i, raw := range filters {
		f, err := parse(raw)
		if err != nil {
			return nil, at(i, err)
		}
		fs[i] = f
	}
	return fs, nil
}

// CheckFilters refuses the filters of reader's REQ or COUNT the engine
// would refuse (invalid:, restricted:), without reading anything.
func CheckFilters(filters []nostr.Filter, reader string) error {
	_, err := nostrPlans(filters, reader)
	return err
}

// nostrRequest is a COUNT's request: its filters, each a plain plan.
func nostrRequest(filters []nostr.Filter) (*request, error) {
	fs, ps, err := parseNostr(filters)
	if err != nil {
		return nil, err
	}
	req := &request{filters: fs}
	for _, p := range ps {
		req.others = append(req.others, p)
	}
	return req, nil
}

// nostrPlans validates reader's REQ or COUNT filters, each one a plain
// plan, and refuses what reader may not ask (request.refused).
func nostrPlans(filters []nostr.Filter, reader string) ([]*plainPlan, error) {
	fs, ps, err := parseNostr(filters)
	if err != nil {
		return nil, err
	}
	if err := (&request{filters: fs}).refused(reader); err != nil {
		return nil, err
	}
	return ps, nil
}

func parseNostr(filters []nostr.Filter) ([]*bridgeFilter, []*plainPlan, error) {
	fs, err := parseEach(filters, fromNostr)
	if err != nil {
		return nil, nil, err
	}
	if err := searchAlone(fs); err != nil {
		return nil, nil, err
	}
	ps := make([]*plainPlan, len(fs))
	for i, f := range fs {
		p, err := newPlainPlan(f, plainMaxLimit)
		if err != nil {
			return nil, nil, at(i, err)
		}
		ps[i] = p
	}
	return fs, ps, nil
}

// traced is ctx with the engine's trace hook, when it has one.
func (e *Engine) traced(ctx context.Context) context.Context {
	if e.trace != nil {
		return store.WithTrace(ctx, e.trace)
	}
	return ctx
}

func (e *Engine) serve(ctx context.Context, community, reader string, req *request) ([]json.RawMessage, error) {
	return e.serveWithin(ctx, community, reader, req, 0)
}

// serveWithin serves req; with budget > 0, a response whose events would
// pass budget bytes is refused with invalid: instead of sent broken.
func (e *Engine) serveWithin(ctx context.Context, community, reader string, req *request, budget int) ([]json.RawMessage, error) {
	if err := req.refused(reader); err != nil {
		return nil, err
	}
	out := &output{seen: map[string]bool{}, events: []json.RawMessage{}, budget: budget}
	ctx = e.traced(ctx)
	err := e.st.Read(ctx, community, reader, func(s *store.Snapshot) error {
		for _, w := range req.windows {
			if err := w.serve(ctx, e, s, out); err != nil {
				return err
			}
		}
		for _, p := range req.others {
			if err := p.serve(ctx, e, s, out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out.over() {
		return nil, invalid("the response would be over %d bytes (the HTTP response limit); ask for fewer events: a smaller limit, fewer filters, or without include_aux", budget)
	}
	return out.events, nil
}

func (e *Engine) count(ctx context.Context, community, reader string, req *request) (int64, error) {
	if err := req.refused(reader); err != nil {
		return 0, err
	}
	reads := make([]store.Countable, 0, len(req.windows)+len(req.others))
	for _, w := range req.windows {
		reads = append(reads, w.counted())
	}
	for _, p := range req.others {
		reads = append(reads, p.counted())
	}
	return e.st.EventsCount(e.traced(ctx), community, reader, reads)
}

// output collects the response: each event once, in serving order.
type output struct {
	seen   map[string]bool
	events []json.RawMessage
	budget int // bytes of events allowed; 0 = no bound
	bytes  int
}

// over reports whether the events passed the budget.
func (o *output) over() bool { return o.budget > 0 && o.bytes > o.budget }

// add appends raw unless an event with id was already sent.
func (o *output) add(id, raw string) {
	if o.seen[id] {
		return
	}
	o.seen[id] = true
	o.bytes += len(raw) + 1
	if o.over() {
		return // refused at the end; stop holding more
	}
	o.events = append(o.events, json.RawMessage(raw))
}

// newestFirst orders events by (created_at DESC, id ASC). Each filter's
// events already come in that order; this merges several filters'.
func newestFirst(events []json.RawMessage) {
	type key struct {
		CreatedAt int64  `json:"created_at"`
		ID        string `json:"id"`
	}
	keys := make([]key, len(events))
	idx := make([]int, len(events))
	for i, raw := range events {
		_ = json.Unmarshal(raw, &keys[i])
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := keys[idx[a]], keys[idx[b]]
		return x.CreatedAt > y.CreatedAt || (x.CreatedAt == y.CreatedAt && x.ID < y.ID)
	})
	sorted := make([]json.RawMessage, len(events))
	for i, j := range idx {
		sorted[i] = events[j]
	}
	copy(events, sorted)
}

// addEvent appends a relay-signed overlay.
func (o *output) addEvent(ev *nostr.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("query: encode kind %d: %w", ev.Kind, err)
	}
	o.add(ev.ID, string(b))
	return nil
}

// sign signs a relay overlay (39005, 39006) with community's relay key.
func (e *Engine) sign(ctx context.Context, community string, ev *nostr.Event) error {
	sg, err := signer.For(ctx, e.sg, community)
	if err != nil {
		return fmt.Errorf("relay key of community %q: %w", community, err)
	}
	return sg.Sign(ctx, ev)
}

func reasonOf(err error) string {
	if r, ok := reject.As(err); ok {
		return r.Reason
	}
	return err.Error()
}
