package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/groupid"
)

// cursor is a channel-window cursor: the (created_at, id) of a row.
type cursor struct {
	CreatedAt int64  `json:"created_at"`
	ID        string `json:"id"`
}

// windowPage is one window response partitioned the way the desktop
// client's parser does (channelWindowResponse.ts): rows by kind, 39005
// summaries keyed by their e tag onto rows, aux by kind, and exactly one
// 39006 whose d names the request.
type windowPage struct {
	rows      []nostr.Event
	summaries map[string]int // row id -> reply_count
	aux       []nostr.Event
	hasMore   bool
	next      *cursor
}

var auxKinds = map[int]bool{5: true, 7: true, 9005: true, 40003: true}

// windowRequest is a head (at nil) or cursor request for channel ch as the
// client writes it (any case); extra adds filter fields.
func windowRequest(ch string, limit int, at *cursor, extra map[string]any) map[string]any {
	f := map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": limit, "top_level": true,
		"include_summaries": true, "include_aux": true}
	if at != nil {
		f["until"], f["before_id"] = at.CreatedAt, at.ID
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// window posts one window request and parses its response, failing the
// test wherever the desktop parser would throw.
func (b *bridge) window(ch string, limit int, at *cursor, extra map[string]any) windowPage {
	b.t.Helper()
	return parseWindow(b.t, b.r, b.query(windowRequest(ch, limit, at, extra)), ch, at)
}

func parseWindow(t *testing.T, r *Relay, evs []nostr.Event, ch string, at *cursor) windowPage {
	t.Helper()
	p := windowPage{summaries: map[string]int{}}
	var bounds []nostr.Event
	for _, ev := range evs {
		switch {
		case ev.Kind == 9:
			p.rows = append(p.rows, ev)
		case auxKinds[ev.Kind]:
			p.aux = append(p.aux, ev)
		case ev.Kind == 39006:
			bounds = append(bounds, ev)
		}
	}
	for _, ev := range evs {
		if ev.Kind != 39005 {
			continue
		}
		checkRelaySigned(t, r, ev)
		root := ev.Tags.GetFirst([]string{"e", ""})
		if root == nil || !hasID(p.rows, (*root)[1]) {
			t.Fatalf("39005 %v names no row of the page", ev.Tags)
		}
		p.summaries[(*root)[1]] = replyCount(t, ev)
	}
	if len(bounds) != 1 {
		t.Fatalf("window response has %d kind 39006 events, want exactly one", len(bounds))
	}
	checkRelaySigned(t, r, bounds[0])
	suffix := "head"
	if at != nil {
		suffix = fmt.Sprintf("%d:%s", at.CreatedAt, strings.ToLower(at.ID))
	}
	// The channel as stored: a UUID lower-cased, any other group id as sent.
	want := groupid.Canonical(ch) + ":" + suffix
	if d := bounds[0].Tags.GetD(); d != want {
		t.Fatalf("39006 d %q, want %q", d, want)
	}
	var content struct {
		HasMore    *bool   `json:"has_more"`
		NextCursor *cursor `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(bounds[0].Content), &content); err != nil || content.HasMore == nil {
		t.Fatalf("39006 content %q", bounds[0].Content)
	}
	if *content.HasMore != (content.NextCursor != nil) {
		t.Fatalf("39006 has_more %v but next_cursor %v", *content.HasMore, content.NextCursor)
	}
	p.hasMore, p.next = *content.HasMore, content.NextCursor
	if p.next != nil {
		last := p.rows[len(p.rows)-1]
		if p.next.CreatedAt != int64(last.CreatedAt) || p.next.ID != last.ID {
			t.Fatalf("next_cursor %+v is not the last row %s", *p.next, last.ID)
		}
	}
	return p
}

func checkRelaySigned(t *testing.T, r *Relay, ev nostr.Event) {
	t.Helper()
	if ev.PubKey != r.App.Signer.PublicKey() {
		t.Fatalf("kind %d is not signed by the relay", ev.Kind)
	}
	if ok, _ := ev.CheckSignature(); !ok {
		t.Fatalf("kind %d signature does not verify", ev.Kind)
	}
}

// allPages follows next_cursor from the head and returns every row.
func (b *bridge) allPages(ch string, limit int, extra map[string]any) (rows []nostr.Event, pages int) {
	b.t.Helper()
	var at *cursor
	for {
		p := b.window(ch, limit, at, extra)
		pages++
		rows = append(rows, p.rows...)
		if !p.hasMore {
			return rows, pages
		}
		at = p.next
	}
}
