package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// # Fan-out off the publisher's path
//
// Deliver posts inline while the audience of a commit (its candidate
// subscriptions) is at most InlineMax: no extra hop, the cheapest path for
// the usual channel. The commit counts at most InlineMax+1 of the
// audience's index entries (an index-only read) before it reads any
// subscription, and with them the subscriptions' sequence number at the
// commit (the cutoff): its cost does not grow with the audience, and an
// audience it hands off costs it no subscription row, filter or access
// check. A larger audience is handed to
// the fan-out function (functions/fanout) by one asynchronous invocation
// (Lambda's InvocationType Event: the call returns once the payload is
// queued): the publisher's OK waits for one small Invoke, whatever the
// audience, never for its rows, its size or its posts.
//
// That first run splits: it cuts the audience's connections, in id order,
// into runs of BatchSize (store.AudienceListBounds), loads its own run,
// invokes the fan-out function asynchronously for each other run (a range
// of the index's key, so each part reads only its own entries), then posts
// its part; the parts are delivered in
// parallel by as many fan-out instances. A chain is two invocations deep
// at most (a part never splits again), far from Lambda's recursive-loop
// detection.
//
// A part carries the items as the publisher resolved them (raw event,
// channel, system flag, the 39005 summaries already signed), the channels
// and the cutoff. The fan-out function loads its part of the subscriptions
// stored up to the cutoff (one opened after the commit read the event as
// stored and does not get it again; a closed one is gone), re-checks each
// reader's access at delivery time, matches and posts (DeliverBatch): the
// same code as inline delivery from there on.
//
// Order: the events of one publisher reach a subscriber in commit order
// when delivered inline; parts of successive commits run in parallel, so a
// subscriber beyond the threshold may get two close events swapped (as
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
	// DefaultBatchSize is the subscriptions of one fan-out invocation
	// (about: a part is a hash share of the connections): 500 posts at
	// Concurrency in flight take well under a second.
	DefaultBatchSize = 500
	// MaxBatchPayload keeps a batch under Lambda's 256 KB asynchronous
	// invocation payload limit, with room for the envelope.
	MaxBatchPayload = 240 << 10
)

// Batch is the payload of one fan-out invocation: the items and either
// the audience Part to load or, as earlier versions sent, the Subs.
type Batch struct {
	Community string      `json:"community"`
	Items     []BatchItem `json:"items"`
	Part      *Part       `json:"part,omitempty"`
	// Subs are [connection id, subscription id] pairs.
	Subs [][2]string `json:"subs,omitempty"`
}

// Part names one share of an audience: the connections in (After,
// Through] when Ranged (store.AudienceListRange), else hash share Index of Of
// (store.AudienceListPart, the parts of an earlier version's split).
type Part struct {
	Index    int      `json:"index"`
	Of       int      `json:"of"`
	Cutoff   int64    `json:"cutoff"`
	Channels []string `json:"channels,omitempty"`
	// Split marks the publisher's hand-off, the whole audience (part 0 of
	// 1): the run that gets it splits a large audience into parts. A run
	// of an earlier version ignores it and delivers the whole part.
	Split bool `json:"split,omitempty"`
	// Ranged parts keep Index 0 and Of 1, so that a run of an earlier
	// version, which knows only hash shares, delivers the whole audience
	// (some messages twice) rather than a wrong share.
	Ranged  bool   `json:"ranged,omitempty"`
	After   string `json:"after,omitempty"`
	Through string `json:"through,omitempty"`
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

// handOff invokes the fan-out function once with the whole audience of
// items stored up to cutoff (Part.Split).
func (f *Fanout) handOff(ctx context.Context, community string, items []*item, cutoff int64) {
	start := time.Now()
	b := Batch{Community: community, Items: make([]BatchItem, len(items))}
	var channels []string
	for i, it := range items {
		b.Items[i] = BatchItem{Event: json.RawMessage(it.raw), Channel: it.channel, System: it.system}
		if it.channel != "" && !slices.Contains(channels, it.channel) {
			channels = append(channels, it.channel)
		}
	}
	b.Part = &Part{Index: 0, Of: 1, Cutoff: cutoff, Channels: channels, Split: true}
	f.handOver(ctx, b, items)
	f.Log.DebugContext(ctx, "fanout: handed off", "community", community, "events", len(items),
		"took_ms", time.Since(start).Milliseconds())
}

// handOver invokes the fan-out function with b; a part that cannot be
// handed over is delivered here rather than lost. It returns the
// connections posted to and the messages sent here.
func (f *Fanout) handOver(ctx context.Context, b Batch, items []*item) (int, int) {
	err := f.invoke(ctx, b)
	if err == nil {
		return 0, 0
	}
	p := *b.Part
	f.Log.WarnContext(ctx, "fanout: async invoke failed, delivering inline", "community", b.Community,
		"part", p.Index, "parts", p.Of, "err", err)
	conns, sent, err := f.deliverPart(ctx, b.Community, items, p)
	if err != nil {
		f.Log.ErrorContext(ctx, "fanout: audience part", "community", b.Community, "part", p.Index, "err", err)
	}
	return conns, sent
}

// invoke hands b to the fan-out function.
func (f *Fanout) invoke(ctx context.Context, b Batch) error {
	payload, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("fanout: encode batch: %w", err)
	}
	if len(payload) > MaxBatchPayload {
		return fmt.Errorf("fanout: batch of %d bytes is over the %d-byte limit", len(payload), MaxBatchPayload)
	}
	return f.Async.InvokeAsync(ctx, payload)
}

// split delivers the publisher's hand-off b: with an audience of more than
// BatchSize subscriptions (and an Invoker), its first part here and every
// other part by an asynchronous invocation of its own, a part that cannot
// be handed over here too. It fails (and the invocation is retried) only
// before any part was handed over or posted to.
func (f *Fanout) split(ctx context.Context, b Batch, items []*item) (int, int, error) {
	whole := *b.Part
	whole.Split = false
	if f.Async == nil {
		return f.deliverPart(ctx, b.Community, items, whole)
	}
	// Runs of BatchSize connections, each a range of the index's key: a
	// part reads its own entries only.
	bounds, err := f.audienceBounds(ctx, b.Community, whole.Channels, f.batchSize())
	if err != nil || len(bounds) == 0 {
		return 0, 0, err
	}
	parts := make([]Part, len(bounds))
	for i, through := range bounds {
		parts[i] = whole
		parts[i].Ranged, parts[i].Through = true, through
		if i > 0 {
			parts[i].After = bounds[i-1]
		}
	}
	first, err := f.audienceRange(ctx, b.Community, whole.Channels, whole.Cutoff, parts[0].After, parts[0].Through)
	if err != nil {
		return 0, 0, err
	}
	var conns, sent int
	for i := 1; i < len(parts); i++ {
		b.Part = &parts[i]
		c, s := f.handOver(ctx, b, items)
		conns, sent = conns+c, sent+s
	}
	c, s := f.deliverTo(ctx, b.Community, items, first)
	return conns + c, sent + s, nil
}

// deliverPart loads part p of the audience and delivers items to it; it
// returns the connections posted to and the messages sent.
func (f *Fanout) deliverPart(ctx context.Context, community string, items []*item, p Part) (int, int, error) {
	var cands []candidate
	var err error
	if p.Ranged {
		cands, err = f.audienceRange(ctx, community, p.Channels, p.Cutoff, p.After, p.Through)
	} else { // the whole audience (a hand-off delivered where it was made)
		cands, err = f.audienceRange(ctx, community, p.Channels, p.Cutoff, "", maxConnectionID)
	}
	if err != nil {
		return 0, 0, err
	}
	conns, sent := f.deliverTo(ctx, community, items, cands)
	return conns, sent, nil
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
	if p := b.Part; p != nil && (p.Of < 1 || p.Index < 0 || p.Index >= p.Of) {
		return fmt.Errorf("%w: part %d of %d", ErrBadBatch, p.Index, p.Of)
	}
	if p := b.Part; p != nil && p.Ranged && (p.Split || p.Through == "" || p.After >= p.Through) {
		return fmt.Errorf("%w: range (%q, %q]", ErrBadBatch, p.After, p.Through)
	}
	if len(items) == 0 || (b.Part == nil && len(b.Subs) == 0) {
		return nil
	}
	start := time.Now()
	var conns, sent int
	var err error
	switch p := b.Part; {
	case p != nil && p.Split:
		if conns, sent, err = f.split(ctx, b, items); err != nil {
			return err
		}
	case p != nil:
		if conns, sent, err = f.deliverPart(ctx, b.Community, items, *p); err != nil {
			return err
		}
	default:
		// A payload of an earlier version names its subscriptions.
		var cands []candidate
		if cands, err = f.subscriptions(ctx, b.Community, b.Subs); err != nil {
			return err
		}
		conns, sent = f.deliverTo(ctx, b.Community, items, cands)
	}
	f.Log.DebugContext(ctx, "fanout: batch delivered", "community", b.Community, "events", len(items),
		"connections", conns, "messages", sent, "took_ms", time.Since(start).Milliseconds())
	return nil
}
