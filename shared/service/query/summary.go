package query

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
)

type summaryJSON struct {
	ReplyCount      int64    `json:"reply_count"`
	DescendantCount int64    `json:"descendant_count"`
	LastReplyAt     *int64   `json:"last_reply_at"`
	Participants    []string `json:"participants"`
}

// summaryEvent signs a 39005 for s.
func (e *Engine) summaryEvent(ctx context.Context, community, channel string, s *records.Summary) (*nostr.Event, error) {
	content, err := json.Marshal(summaryJSON{
		ReplyCount:      s.ReplyCount,
		DescendantCount: s.Descendants,
		LastReplyAt:     s.LastReplyAt,
		Participants:    s.Participants,
	})
	if err != nil {
		return nil, fmt.Errorf("query: encode thread summary: %w", err)
	}
	ev := &nostr.Event{
		Kind:      kinds.ThreadSummary,
		CreatedAt: nostr.Timestamp(e.now().Unix()),
		Tags:      nostr.Tags{{"e", s.Root}, {"d", s.Root}, {"h", channel}},
		Content:   string(content),
	}
	if err := e.sign(ctx, community, ev); err != nil {
		return nil, fmt.Errorf("query: sign thread summary: %w", err)
	}
	return ev, nil
}

// ThreadSummary returns a fresh relay-signed 39005 for rootID (reply_count
// 0 once its last reply is deleted), or nil when the root is unknown. Live
// fan-out calls it after a reply or a reply's deletion; it does no access
// check (fan-out checks each subscriber).
func (e *Engine) ThreadSummary(ctx context.Context, community, rootID string) (*nostr.Event, error) {
	s, err := e.st.ThreadMetadataGetSummary(e.traced(ctx), community, rootID)
	if err != nil || s == nil {
		return nil, err
	}
	return e.summaryEvent(ctx, community, s.Channel, s)
}
