package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Buzz's private read-state API (/buzz/v1/me/sidebar, /buzz/v1/me/read-state)
// as its relay answers it (block/buzz crates/buzz-relay/src/api/buzz_v1,
// docs/buzz-v1.md) and its desktop app reads it (desktop/src/shared/api/
// sidebar.ts): per joined channel, unread and attention counts since the
// key's read marks, answered from one snapshot. A mark is NIP-RS's
// per-context frontier (a channel, thread:<root>, the whole channel) as a
// position in the window's order, (created_at, id) of the message read
// through; it only moves forward.
//
// The rules, per message of a channel, in order (Buzz's):
//   - eligible: a kind of relayinfo.BuzzV1EligibleKinds, live (not deleted
//     or expired), not the reader's, authored within the horizon
//     (relayinfo.BuzzV1RetentionSeconds);
//   - past its mark: a top-level message past the later of the timeline's
//     mark and the whole-channel cut, a reply past the later of its
//     thread's mark and the cut;
//   - its reason, the first that holds: direct (a DM), mention (a p tag
//     names the reader), conversation (a reply whose parent the reader
//     wrote, or under which the reader replied), broadcast (broadcast=1),
//     none;
//   - it counts when it is top-level or has a reason; unread counts them,
//     attention those with a reason; a counted reply lists its thread.

// ReadCount is Buzz's count: exact, at_least (a lower bound, more > 0) or
// unknown (no number).
type ReadCount struct {
	Status string `json:"status"`
	Value  *int   `json:"value,omitempty"`
}

func count(n int, complete bool) ReadCount {
	switch {
	case complete:
		return ReadCount{Status: "exact", Value: &n}
	case n > 0:
		return ReadCount{Status: "at_least", Value: &n}
	}
	return ReadCount{Status: "unknown"}
}

// SidebarAccount is the account part of every answer.
type SidebarAccount struct {
	RetentionSeconds int64 `json:"retention_seconds"`
	CutoffMS         int64 `json:"cutoff_ms"`
	ImportedAtMS     *int  `json:"imported_at_ms"`
}

// ThreadRow is a thread with counted unread replies.
type ThreadRow struct {
	RootID        string    `json:"root_id"`
	Unread        ReadCount `json:"unread"`
	LatestReplyID string    `json:"latest_reply_id"`
	LatestReplyAt int64     `json:"latest_reply_at"`
}

// SidebarThreads is a row's threads: at most
// relayinfo.BuzzV1MaxThreadSummaries, newest unread reply first.
type SidebarThreads struct {
	Items    []ThreadRow `json:"items"`
	Complete bool        `json:"complete"`
}

// SidebarRow is one joined channel.
type SidebarRow struct {
	ChannelID             string         `json:"channel_id"`
	Name                  string         `json:"name"`
	ChannelType           string         `json:"channel_type"`
	Archived              bool           `json:"archived"`
	Hidden                bool           `json:"hidden"`
	Unread                ReadCount      `json:"unread"`
	Attention             ReadCount      `json:"attention"`
	LatestMessageID       *string        `json:"latest_message_id"`
	LatestMessageAt       *int64         `json:"latest_message_at"`
	LatestMessageComplete bool           `json:"latest_message_complete"`
	Threads               SidebarThreads `json:"threads"`
}

// SidebarPage is GET /buzz/v1/me/sidebar's answer.
type SidebarPage struct {
	Account    SidebarAccount `json:"account"`
	Channels   []SidebarRow   `json:"channels"`
	NextCursor *string        `json:"next_cursor"`
}

// SidebarQuery is a sidebar request: a page after Cursor ("" first), or
// exactly ChannelIDs.
type SidebarQuery struct {
	Limit      int
	Cursor     string
	ChannelIDs []string
	// AllGroups: every joined group, not only UUID-named channels
	// (relayinfo.BuzzV1AllGroups).
	AllGroups bool
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// validChannel is a channel id the API takes: a UUID, or with all_groups
// any group id.
func validChannel(id string, all bool) bool {
	return uuidRE.MatchString(id) || (all && groupid.Valid(id))
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ErrInvalid is the one refusal of a malformed request (Buzz's
// invalid_request, 400).
func ErrInvalid(what string) error { return reject.Invalidf("invalid_request: %s", what) }

// ParseSidebarQuery reads the sidebar's query parameters (Buzz's: limit,
// cursor, channel_ids; this relay's all_groups); any other parameter, a
// bad value or channel_ids beside limit or cursor is invalid.
func ParseSidebarQuery(params map[string]string) (SidebarQuery, error) {
	q := SidebarQuery{Limit: relayinfo.BuzzV1MaxChannels}
	for k := range params {
		if k != "limit" && k != "cursor" && k != "channel_ids" && k != relayinfo.BuzzV1AllGroups {
			return q, ErrInvalid("unknown parameter " + k)
		}
	}
	if v, ok := params[relayinfo.BuzzV1AllGroups]; ok {
		if v != "1" {
			return q, ErrInvalid(relayinfo.BuzzV1AllGroups + " must be 1")
		}
		q.AllGroups = true
	}
	if v, ok := params["limit"]; ok {
		n := 0
		if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n < 1 || n > relayinfo.BuzzV1MaxChannels {
			return q, ErrInvalid(fmt.Sprintf("limit must be 1 to %d", relayinfo.BuzzV1MaxChannels))
		}
		q.Limit = n
	}
	if v, ok := params["cursor"]; ok {
		if !validChannel(v, q.AllGroups) {
			return q, ErrInvalid("cursor is not a channel id")
		}
		q.Cursor = v
	}
	if v, ok := params["channel_ids"]; ok {
		_, hasLimit := params["limit"]
		_, hasCursor := params["cursor"]
		ids := strings.Split(v, ",")
		if hasLimit || hasCursor || len(ids) < 1 || len(ids) > relayinfo.BuzzV1MaxChannels {
			return q, ErrInvalid(fmt.Sprintf("channel_ids takes 1 to %d ids and no limit or cursor", relayinfo.BuzzV1MaxChannels))
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !validChannel(id, q.AllGroups) || seen[id] {
				return q, ErrInvalid("channel_ids must be unique channel ids")
			}
			seen[id] = true
		}
		q.ChannelIDs = ids
	}
	return q, nil
}

// account is the answer's account at now.
func (e *Engine) account() (SidebarAccount, int64) {
	now := e.now()
	cutoff := now.Unix() - relayinfo.BuzzV1RetentionSeconds
	return SidebarAccount{RetentionSeconds: relayinfo.BuzzV1RetentionSeconds, CutoffMS: cutoff * 1000}, cutoff
}

// Sidebar answers GET /buzz/v1/me/sidebar for reader.
func (e *Engine) Sidebar(ctx context.Context, community, reader string, q SidebarQuery) (*SidebarPage, error) {
	acct, horizon := e.account()
	page := &SidebarPage{Account: acct, Channels: []SidebarRow{}}
	ctx = e.traced(ctx)
	err := e.st.Read(ctx, community, reader, func(s *store.Snapshot) error {
		limit := q.Limit
		if q.ChannelIDs == nil {
			limit++ // one more says whether a next page exists
		} else {
			limit = len(q.ChannelIDs)
		}
		chs, err := s.SidebarChannels(ctx, q.Cursor, q.ChannelIDs, !q.AllGroups, relayinfo.BuzzV1EligibleKinds, limit)
		if err != nil {
			return err
		}
		if q.ChannelIDs == nil && len(chs) > q.Limit {
			chs = chs[:q.Limit]
			next := chs[len(chs)-1].ID
			page.NextCursor = &next
		}
		page.Channels, err = rows(ctx, s, chs, horizon)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query: sidebar of %s: %w", reader, err)
	}
	return page, nil
}

// marks is a channel's marks by context.
type marks map[string]records.Cursor

func (m marks) get(ctx string) records.Cursor { return m[ctx] }

// later is the later of two positions.
func later(a, b records.Cursor) records.Cursor {
	if after(b, a) {
		return b
	}
	return a
}

// after reports whether position a is after (newer than) b in the channel
// window's order, (created_at DESC, id ASC): within one second the smaller
// id is the newer (records.Cursor).
func after(a, b records.Cursor) bool {
	return a.CreatedAt > b.CreatedAt || (a.CreatedAt == b.CreatedAt && a.ID < b.ID)
}

// reason is a message's reason ("" none), Buzz's order.
func reason(dm, mention, reply, conversation, broadcast bool) string {
	switch {
	case dm:
		return "direct"
	case mention:
		return "mention"
	case reply && conversation:
		return "conversation"
	case broadcast:
		return "broadcast"
	}
	return ""
}

// rows builds the sidebar rows of chs from their marks and unread windows.
func rows(ctx context.Context, s *store.Snapshot, chs []records.SidebarChannel, horizon int64) ([]SidebarRow, error) {
	out := make([]SidebarRow, 0, len(chs))
	if len(chs) == 0 {
		return out, nil
	}
	ids := make([]string, len(chs))
	for i, c := range chs {
		ids[i] = c.ID
	}
	ms, err := s.ReadMarks(ctx, ids)
	if err != nil {
		return nil, err
	}
	byChannel := map[string]marks{}
	for _, m := range ms {
		if byChannel[m.Channel] == nil {
			byChannel[m.Channel] = marks{}
		}
		byChannel[m.Channel][m.Context] = m.At
	}
	floors := make([]records.ReadMark, len(chs))
	for i, c := range chs {
		floors[i] = records.ReadMark{Channel: c.ID, At: byChannel[c.ID].get(records.Cut)}
	}
	window, err := s.UnreadWindows(ctx, floors, relayinfo.BuzzV1EligibleKinds, horizon)
	if err != nil {
		return nil, err
	}
	byWindow := map[string][]records.UnreadRow{}
	for _, r := range window {
		byWindow[r.Channel] = append(byWindow[r.Channel], r)
	}
	for _, c := range chs {
		out = append(out, row(c, byChannel[c.ID], byWindow[c.ID]))
	}
	return out, nil
}

// row applies the rules to one channel's window (newest first).
func row(c records.SidebarChannel, m marks, window []records.UnreadRow) SidebarRow {
	r := SidebarRow{ChannelID: c.ID, Name: c.Name, ChannelType: c.Type, Archived: c.Archived, Hidden: c.Hidden,
		LatestMessageComplete: true, Threads: SidebarThreads{Items: []ThreadRow{}}}
	if c.LatestID != "" {
		id, at := c.LatestID, c.LatestAt
		r.LatestMessageID, r.LatestMessageAt = &id, &at
	}
	complete := len(window) <= records.UnreadScan
	if !complete {
		window = window[:records.UnreadScan]
	}
	cut := m.get(records.Cut)
	dm := c.Type == nip29.TypeDM
	unread, attention := 0, 0
	type thread struct {
		n      int
		latest records.Cursor
	}
	threads := map[string]*thread{}
	for _, w := range window {
		pos := records.Cursor{CreatedAt: w.CreatedAt, ID: w.ID}
		mark := later(cut, m.get(records.Timeline))
		if !w.TopLevel {
			mark = later(cut, m.get(w.Root))
		}
		if !after(pos, mark) {
			continue
		}
		why := reason(dm, w.Mention, !w.TopLevel, w.Conversation, w.Broadcast)
		if !w.TopLevel && why == "" {
			continue // a reply without a reason is not unread
		}
		unread++
		if why != "" {
			attention++
		}
		if w.Root != "" { // a reply, a broadcast one (in the timeline too) included
			t := threads[w.Root]
			if t == nil {
				t = &thread{}
				threads[w.Root] = t
			}
			t.n++
			t.latest = later(t.latest, pos)
		}
	}
	r.Unread, r.Attention = count(unread, complete), count(attention, complete)
	for root, t := range threads {
		r.Threads.Items = append(r.Threads.Items, ThreadRow{RootID: root, Unread: count(t.n, complete),
			LatestReplyID: t.latest.ID, LatestReplyAt: t.latest.CreatedAt})
	}
	slices.SortFunc(r.Threads.Items, func(a, b ThreadRow) int {
		if a.LatestReplyAt != b.LatestReplyAt {
			return int(b.LatestReplyAt - a.LatestReplyAt)
		}
		return strings.Compare(a.RootID, b.RootID)
	})
	r.Threads.Complete = complete && len(r.Threads.Items) <= relayinfo.BuzzV1MaxThreadSummaries
	if len(r.Threads.Items) > relayinfo.BuzzV1MaxThreadSummaries {
		r.Threads.Items = r.Threads.Items[:relayinfo.BuzzV1MaxThreadSummaries]
	}
	return r
}

// ReadTarget is a channel's timeline, or one thread of it (RootID).
type ReadTarget struct {
	ChannelID string `json:"channel_id"`
	RootID    string `json:"root_id,omitempty"`
}

func (t ReadTarget) valid(all bool) bool {
	return validChannel(t.ChannelID, all) && (t.RootID == "" || hex64.MatchString(t.RootID))
}

// ContextQuery is one context of GET read-state.
type ContextQuery struct {
	Target     ReadTarget `json:"target"`
	MessageIDs []string   `json:"message_ids"`
}

// strict decodes raw into v, refusing unknown fields and trailing data.
func strict(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// ParseContexts reads GET read-state's targets parameter: 1 to
// relayinfo.BuzzV1MaxContexts contexts, at most
// relayinfo.BuzzV1MaxContextMessages message ids in all.
func ParseContexts(params map[string]string, all bool) ([]ContextQuery, error) {
	for k := range params {
		if k != "targets" {
			return nil, ErrInvalid("unknown parameter " + k)
		}
	}
	var cs []ContextQuery
	if err := strict([]byte(params["targets"]), &cs); err != nil {
		return nil, ErrInvalid("targets must be a JSON array of {target, message_ids}")
	}
	if len(cs) < 1 || len(cs) > relayinfo.BuzzV1MaxContexts {
		return nil, ErrInvalid(fmt.Sprintf("targets takes 1 to %d contexts", relayinfo.BuzzV1MaxContexts))
	}
	n := 0
	for _, c := range cs {
		if !c.Target.valid(all) {
			return nil, ErrInvalid("a target is not a channel id and optional root id")
		}
		for _, id := range c.MessageIDs {
			if !hex64.MatchString(id) {
				return nil, ErrInvalid("message_ids must be event ids")
			}
		}
		n += len(c.MessageIDs)
	}
	if n > relayinfo.BuzzV1MaxContextMessages {
		return nil, ErrInvalid(fmt.Sprintf("at most %d message ids", relayinfo.BuzzV1MaxContextMessages))
	}
	return cs, nil
}

// MessageState is one message's state in a context.
type MessageState struct {
	MessageID string `json:"message_id"`
	Status    string `json:"status"`
	// Reason is set (null for none) only with status unread.
	Reason *json.RawMessage `json:"reason,omitempty"`
}

// ContextState is one context's answer: available with its messages, or
// unavailable (missing and not yours alike).
type ContextState struct {
	Status   string         `json:"status"`
	Messages []MessageState `json:"messages,omitempty"`
}

// ContextPage is GET read-state's answer.
type ContextPage struct {
	Account  SidebarAccount `json:"account"`
	Contexts []ContextState `json:"contexts"`
}

// Contexts answers GET /buzz/v1/me/read-state for reader.
func (e *Engine) Contexts(ctx context.Context, community, reader string, cs []ContextQuery) (*ContextPage, error) {
	acct, horizon := e.account()
	page := &ContextPage{Account: acct, Contexts: make([]ContextState, len(cs))}
	ctx = e.traced(ctx)
	err := e.st.Read(ctx, community, reader, func(s *store.Snapshot) error {
		for i, c := range cs {
			st, err := contextState(ctx, s, c, horizon)
			if err != nil {
				return err
			}
			page.Contexts[i] = st
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("query: read-state contexts of %s: %w", reader, err)
	}
	return page, nil
}

func rawReason(why string) *json.RawMessage {
	b := json.RawMessage("null")
	if why != "" {
		b, _ = json.Marshal(why)
	}
	return &b
}

// contextState is one context's state: unavailable unless the reader is a
// member of its live channel (and, for a thread, its root is a top-level
// message there); each message in order.
func contextState(ctx context.Context, s *store.Snapshot, c ContextQuery, horizon int64) (ContextState, error) {
	chs, err := s.SidebarChannels(ctx, "", []string{c.Target.ChannelID}, false, relayinfo.BuzzV1EligibleKinds, 1)
	if err != nil || len(chs) == 0 {
		return ContextState{Status: "unavailable"}, err
	}
	ids := slices.Clone(c.MessageIDs)
	if c.Target.RootID != "" {
		ids = append(ids, c.Target.RootID)
	}
	msgs, err := s.ReadStateMessages(ctx, c.Target.ChannelID, ids, relayinfo.BuzzV1EligibleKinds)
	if err != nil {
		return ContextState{}, err
	}
	byID := map[string]records.ContextMessage{}
	for _, m := range msgs {
		byID[m.ID] = m
	}
	if c.Target.RootID != "" {
		if root, ok := byID[c.Target.RootID]; !ok || !root.TopLevel {
			return ContextState{Status: "unavailable"}, nil
		}
	}
	ms, err := s.ReadMarks(ctx, []string{c.Target.ChannelID})
	if err != nil {
		return ContextState{}, err
	}
	m := marks{}
	for _, x := range ms {
		m[x.Context] = x.At
	}
	dm := chs[0].Type == nip29.TypeDM
	st := ContextState{Status: "available", Messages: make([]MessageState, 0, len(c.MessageIDs))}
	for _, id := range c.MessageIDs {
		x, ok := byID[id]
		in := ok && ((c.Target.RootID == "" && x.TopLevel) || (c.Target.RootID != "" && x.Root == c.Target.RootID))
		ms := MessageState{MessageID: id}
		switch {
		case !in:
			ms.Status = "unavailable"
		case x.Pubkey == s.Reader() || !x.Live || !slices.Contains(relayinfo.BuzzV1EligibleKinds, x.Kind) || x.CreatedAt < horizon:
			ms.Status = "not_counted"
		default:
			mark := later(m.get(records.Cut), m.get(records.Timeline))
			if c.Target.RootID != "" {
				mark = later(m.get(records.Cut), m.get(c.Target.RootID))
			}
			why := reason(dm, x.Mention, !x.TopLevel, x.Conversation, x.Broadcast)
			switch {
			case !after(records.Cursor{CreatedAt: x.CreatedAt, ID: x.ID}, mark):
				ms.Status = "read"
			case !x.TopLevel && why == "":
				ms.Status = "not_counted"
			default:
				ms.Status, ms.Reason = "unread", rawReason(why)
			}
		}
		st.Messages = append(st.Messages, ms)
	}
	return st, nil
}

// Intent is one POST read-state intent, as sent.
type Intent struct {
	Type      string      `json:"type"`
	Target    *ReadTarget `json:"target,omitempty"`
	ChannelID string      `json:"channel_id,omitempty"`
	MessageID string      `json:"message_id"`
}

// Outcome is one intent's outcome: applied, blocked (missing and not yours
// alike), invalid, or unknown with retryable (a failure after which the
// intent may or may not have committed).
type Outcome struct {
	Status    string `json:"status"`
	Retryable bool   `json:"retryable,omitempty"`
}

// WriteResult is POST read-state's answer: an outcome per intent, in
// order, and the rows of the channels an intent was applied to.
type WriteResult struct {
	Outcomes         []Outcome    `json:"outcomes"`
	ProjectionStatus string       `json:"projection_status"`
	Channels         []SidebarRow `json:"channels,omitempty"`
}

// ParseIntents reads POST read-state's body: {"intents":[...]}, 1 to
// relayinfo.BuzzV1MaxIntents; each intent is decoded on its own
// (ApplyIntents), so one bad intent is one invalid outcome.
func ParseIntents(body []byte) ([]json.RawMessage, error) {
	if len(body) > relayinfo.BuzzV1MaxWriteBody {
		return nil, ErrInvalid("the body is larger than 64 KiB")
	}
	var b struct {
		Intents []json.RawMessage `json:"intents"`
	}
	if err := strict(body, &b); err != nil || len(b.Intents) < 1 || len(b.Intents) > relayinfo.BuzzV1MaxIntents {
		return nil, ErrInvalid(fmt.Sprintf("the body must be {\"intents\": [1 to %d intents]}", relayinfo.BuzzV1MaxIntents))
	}
	return b.Intents, nil
}

// decodeIntent is one intent's channel, mark context and anchor; ok false
// when it is malformed.
func decodeIntent(raw json.RawMessage, all bool) (channel, scope, anchor, thread string, ok bool) {
	var in Intent
	if strict(raw, &in) != nil || !hex64.MatchString(in.MessageID) {
		return "", "", "", "", false
	}
	switch in.Type {
	case "mark_through":
		if in.Target == nil || in.ChannelID != "" || !in.Target.valid(all) {
			return "", "", "", "", false
		}
		scope = records.Timeline
		if in.Target.RootID != "" {
			scope = in.Target.RootID
		}
		return in.Target.ChannelID, scope, in.MessageID, in.Target.RootID, true
	case "mark_channel_read":
		if in.Target != nil || !validChannel(in.ChannelID, all) {
			return "", "", "", "", false
		}
		return in.ChannelID, records.Cut, in.MessageID, "", true
	}
	return "", "", "", "", false
}

// ApplyIntents applies each intent in a transaction of its own (an earlier
// one's commit stands whatever a later one does), then reads the rows of
// the channels any was applied to.
func (e *Engine) ApplyIntents(ctx context.Context, community, reader string, intents []json.RawMessage, all bool) (*WriteResult, error) {
	res := &WriteResult{Outcomes: make([]Outcome, len(intents)), ProjectionStatus: "not_requested"}
	var applied []string
	for i, raw := range intents {
		channel, scope, anchor, thread, ok := decodeIntent(raw, all)
		if !ok {
			res.Outcomes[i] = Outcome{Status: "invalid"}
			continue
		}
		var done bool
		err := e.st.Tx(ctx, community, func(tx *store.Tx) (err error) {
			done, err = tx.ReadMarksPut(ctx, reader, channel, scope, anchor, relayinfo.BuzzV1EligibleKinds, thread)
			return err
		})
		switch {
		case err != nil:
			res.Outcomes[i] = Outcome{Status: "unknown", Retryable: true}
		case done:
			res.Outcomes[i] = Outcome{Status: "applied"}
			if !slices.Contains(applied, channel) {
				applied = append(applied, channel)
			}
		default:
			res.Outcomes[i] = Outcome{Status: "blocked"}
		}
	}
	slices.Sort(applied)
	for len(applied) > 0 {
		n := min(len(applied), relayinfo.BuzzV1MaxChannels)
		page, err := e.Sidebar(ctx, community, reader, SidebarQuery{ChannelIDs: applied[:n], AllGroups: true})
		if err != nil {
			break // committed outcomes stand; their rows are left out
		}
		res.Channels = append(res.Channels, page.Channels...)
		applied = applied[n:]
	}
	return res, nil
}
