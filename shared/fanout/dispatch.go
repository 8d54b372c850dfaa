package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// # Fan-out off the publisher's path
//
// Deliver posts inline while the audience of a commit (the connections
// holding a candidate subscription) is at most InlineMax: no extra hop, the
// cheapest path for the usual channel. A larger audience is cut into
// batches of BatchSize connections, each handed to the fan-out function
// (functions/fanout) by an asynchronous invocation (Lambda's InvocationType
// Event: the call returns once the payload is queued), so the publisher's
// OK waits for one Invoke per batch instead of thousands of posts, and the
// batches are delivered in parallel by as many fan-out instances.
//
// A batch carries the items as the publisher resolved them (raw event,
// channel, system flag, the 39005 summaries already signed) and the
// (connection, subscription) keys of its share of the audience. The fan-out
// function reloads those subscriptions (a closed one is skipped), re-checks
// each reader's access at delivery time, matches and posts (DeliverBatch):
// the same code as inline delivery from there on.
//
// Order: the events of one publisher reach a subscriber in commit order
// when delivered inline; batches of successive commits run in parallel, so
// a subscriber beyond the threshold may get two close events swapped (as
// NIP-01 allows; clients sort by created_at).

// Invoker hands a payload to the fan-out function without waiting for it
// to run (Lambda Invoke with InvocationType Event; localdev's emulator runs
// the same handler in the background).
type Invoker interface {
	InvokeAsync(ctx context.Context, payload []byte) error
}

// Defaults of the dispatch.
const (
	// DefaultInlineMax is the largest audience delivered inline: about
	// InlineMax/Concurrency post round trips (tens of ms) before the OK.
	DefaultInlineMax = 200
	// DefaultBatchSize is the connections of one fan-out invocation: 500
	// posts at Concurrency in flight take well under a second.
	DefaultBatchSize = 500
	// MaxBatchPayload keeps a batch under Lambda's 256 KB asynchronous
	// invocation payload limit, with room for the envelope.
	MaxBatchPayload = 240 << 10
)

// Batch is the payload of one fan-out invocation.
type Batch struct {
	Community string      `json:"community"`
	Items     []BatchItem `json:"items"`
	// Subs are [connection id, subscription id] pairs.
	Subs [][2]string `json:"subs"`
}

// BatchItem is one event to deliver, as the committing function resolved it.
type BatchItem struct {
	Event   json.RawMessage `json:"event"`
	Channel string          `json:"channel,omitempty"`
	System  bool            `json:"system,omitempty"`
}

func (f *Fanout) inlineMax() int {
	if f.InlineMax <= 0 {
		return DefaultInlineMax
	}
	return f.InlineMax
}

func (f *Fanout) batchSize() int {
	if f.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return f.BatchSize
}

// connections counts the distinct connections among cands.
func connections(cands []candidate) int {
	seen := make(map[string]struct{}, len(cands))
	for _, c := range cands {
		seen[c.connection] = struct{}{}
	}
	return len(seen)
}

// dispatch cuts the audience into batches (a connection's subscriptions
// stay in one batch, so its messages keep their order) and invokes the
// fan-out function for each. A batch that cannot be handed over is
// delivered inline rather than lost.
func (f *Fanout) dispatch(ctx context.Context, community string, items []*item, cands []candidate) {
	start := time.Now()
	bitems := make([]BatchItem, len(items))
	size := 0
	for i, it := range items {
		bitems[i] = BatchItem{Event: json.RawMessage(it.raw), Channel: it.channel, System: it.system}
		size += len(it.raw) + len(it.channel) + 32
	}
	per := f.batchSize()
	var batches [][]candidate
	var cur []candidate
	byConn := map[string][]candidate{}
	var order []string
	for _, c := range cands {
		if _, ok := byConn[c.connection]; !ok {
			order = append(order, c.connection)
		}
		byConn[c.connection] = append(byConn[c.connection], c)
	}
	n, bytes := 0, size
	for _, id := range order {
		cs := byConn[id]
		keyBytes := 0
		for _, c := range cs {
			keyBytes += len(c.connection) + len(c.sub) + 8
		}
		if n > 0 && (n >= per || bytes+keyBytes > MaxBatchPayload) {
			batches = append(batches, cur)
			cur, n, bytes = nil, 0, size
		}
		cur = append(cur, cs...)
		n++
		bytes += keyBytes
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	invoked, inline := 0, 0
	for _, bc := range batches {
		b := Batch{Community: community, Items: bitems, Subs: make([][2]string, len(bc))}
		for i, c := range bc {
			b.Subs[i] = [2]string{c.connection, c.sub}
		}
		payload, err := json.Marshal(b)
		if err == nil && len(payload) > MaxBatchPayload {
			err = fmt.Errorf("batch of %d bytes is over the %d-byte limit", len(payload), MaxBatchPayload)
		}
		if err == nil {
			err = f.Async.InvokeAsync(ctx, payload)
		}
		if err != nil {
			f.Log.WarnContext(ctx, "fanout: async invoke failed, delivering inline", "community", community,
				"subscriptions", len(bc), "err", err)
			f.deliverTo(ctx, community, items, bc)
			inline++
			continue
		}
		invoked++
	}
	f.Log.DebugContext(ctx, "fanout: dispatched", "community", community, "events", len(items),
		"candidates", len(cands), "batches", invoked, "inline_batches", inline, "took_ms", time.Since(start).Milliseconds())
}

// ErrBadBatch is returned for a payload that is not a fan-out batch; it is
// not worth a retry.
var ErrBadBatch = errors.New("fanout: not a fan-out batch")

// DeliverBatch is the fan-out function: it delivers one batch. It fails
// (and the asynchronous invocation is retried) only when nothing was
// posted yet; post failures are logged, as inline.
func (f *Fanout) DeliverBatch(ctx context.Context, payload []byte) error {
	var b Batch
	if err := json.Unmarshal(payload, &b); err != nil || b.Community == "" {
		return fmt.Errorf("%w: %v", ErrBadBatch, err)
	}
	items := make([]*item, 0, len(b.Items))
	for _, bi := range b.Items {
		var ev nostr.Event
		if err := json.Unmarshal(bi.Event, &ev); err != nil {
			return fmt.Errorf("%w: event: %v", ErrBadBatch, err)
		}
		items = append(items, &item{ev: &ev, raw: string(bi.Event), channel: bi.Channel, system: bi.System})
	}
	if len(items) == 0 || len(b.Subs) == 0 {
		return nil
	}
	start := time.Now()
	cands, err := f.Registry.subscriptions(ctx, b.Community, b.Subs)
	if err != nil {
		return err
	}
	conns, sent := f.deliverTo(ctx, b.Community, items, cands)
	f.Log.DebugContext(ctx, "fanout: batch delivered", "community", b.Community, "events", len(items),
		"subscriptions", len(b.Subs), "live", len(cands), "connections", conns, "messages", sent,
		"took_ms", time.Since(start).Milliseconds())
	return nil
}
