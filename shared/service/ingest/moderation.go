package ingest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip40"
	"github.com/buzzrelay/relay/shared/domain/nip75"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/resolve"
)

// Buzz's moderation commands (9040-9044) and NIP-56 reports (1984). A
// command comes from one of the community's operators (its moderators),
// acts on the same bans NIP-86 manages (store.putPubkeyRule: one rule, two
// doors), and writes an audit row, all in this event's one transaction; a
// report joins the operators' queue. Neither is stored as an event, so no
// read serves it and no subscriber receives it.

// MaxReasonBytes bounds a command's reason and a report's content kept in
// the audit and the queue.
const MaxReasonBytes = 4096

// unbanOrZapGoal is kind 9041, two things by its tags: NIP-75's zap goal
// carries an amount tag (Flotilla posts one in a room: amount, relays,
// summary, h), Buzz's unban never does (a p tag, a reason). A zap goal is
// a message (stored in its channel when it has an h tag); anything else
// is the unban, for operators only. Amethyst tells them apart the same way.
func (a *apply) unbanOrZapGoal(ctx context.Context) error {
	if !nip75.IsGoal(a.ev.Tags) {
		return a.moderationCommand(ctx)
	}
	if err := nip75.CheckGoal(a.ev.Tags); err != nil {
		return err
	}
	return a.message(ctx)
}

func (a *apply) moderationCommand(ctx context.Context) error {
	op, err := a.tx.OperatorsExists(ctx, a.ev.PubKey)
	if err != nil {
		return err
	}
	if !op {
		return reject.Restrictedf("kind %d is for this community's moderators", a.ev.Kind)
	}
	reason, _ := filter.TagValue(a.ev.Tags, "reason")
	if len(reason) > MaxReasonBytes {
		return reject.Invalidf("reason is longer than %d bytes", MaxReasonBytes)
	}
	act := records.ModerationAction{EventID: a.ev.ID, Actor: a.ev.PubKey, Kind: a.ev.Kind, Reason: reason, CreatedAt: a.now}
	var run func() error
	switch a.ev.Kind {
	case kinds.ModerationResolve:
		id, ok := filter.TagValue(a.ev.Tags, "report")
		if !ok || !eventcheck.LowerHex(id, 64) {
			return reject.Invalidf("a resolve needs a report tag naming the report's 64-hex event id")
		}
		status, _ := filter.TagValue(a.ev.Tags, "status")
		action, hasAction := filter.TagValue(a.ev.Tags, "action")
		if err := resolve.Check(status, action, hasAction); err != nil {
			return err
		}
		act.Target = id
		run = func() error {
			ok, err := a.tx.ModerationReportsUpdate(ctx, id, a.ev.PubKey, status, action, a.now)
			if err == nil && !ok {
				err = reject.Invalidf("report %s is not open", id)
			}
			return err
		}
	default:
		p, ok := filter.TagValue(a.ev.Tags, "p")
		if !ok || !eventcheck.LowerHex(p, 64) {
			return reject.Invalidf("kind %d needs a p tag naming the 64-hex public key it acts on", a.ev.Kind)
		}
		act.Target = p
		expires, err := a.expiration(a.ev.Kind == kinds.ModerationTimeout)
		if err != nil {
			return err
		}
		act.Expires = expires
		run = func() error {
			switch a.ev.Kind {
			case kinds.ModerationBan:
				return a.tx.PubkeyRulesUpsert(ctx, p, "ban", reason, a.ev.PubKey, expires, a.now)
			case kinds.ModerationTimeout:
				return a.tx.PubkeyRulesUpsert(ctx, p, "timeout", reason, a.ev.PubKey, expires, a.now)
			case kinds.ModerationUnban:
				_, err := a.tx.PubkeyRulesDelete(ctx, p, "ban")
				return err
			default: // untimeout
				_, err := a.tx.PubkeyRulesDelete(ctx, p, "timeout")
				return err
			}
		}
	}
	// The audit row first: a repeat of the command is caught before it acts.
	fresh, err := a.tx.ModerationActionsInsert(ctx, act)
	if err != nil {
		return err
	}
	if !fresh {
		return reject.Duplicatef("event %s is already applied", a.ev.ID)
	}
	return run()
}

// expiration reads the command's expiration tag (nip40.Expiration; the
// pipeline's first check has refused one not ahead of the clock, nip40.Check);
// required when need.
func (a *apply) expiration(need bool) (*int64, error) {
	at, ok, err := nip40.Expiration(a.ev.Tags)
	if err != nil {
		return nil, err
	}
	if !ok {
		if need {
			return nil, reject.Invalidf("kind %d needs an expiration tag (unix seconds)", a.ev.Kind)
		}
		return nil, nil
	}
	if err := nip40.Check(a.ev.Tags, a.now); err != nil {
		return nil, err
	}
	return &at, nil
}

// report queues a NIP-56 report: a p tag names the reported key, an
// optional e tag the reported event, the report type is the third element
// of that tag.
func (a *apply) report(ctx context.Context) error {
	r := records.Report{ID: a.ev.ID, Reporter: a.ev.PubKey, Content: a.ev.Content, CreatedAt: int64(a.ev.CreatedAt)}
	for _, t := range a.ev.Tags {
		switch {
		case len(t) >= 2 && t[0] == "p" && r.TargetPubkey == "":
			r.TargetPubkey = t[1]
			if len(t) >= 3 && r.Type == "" {
				r.Type = t[2]
			}
		case len(t) >= 2 && t[0] == "e" && r.TargetEvent == "":
			r.TargetEvent = t[1]
			if len(t) >= 3 {
				r.Type = t[2]
			}
		}
	}
	if !eventcheck.LowerHex(r.TargetPubkey, 64) {
		return reject.Invalidf("a report needs a p tag naming the reported 64-hex public key")
	}
	if r.TargetEvent != "" && !eventcheck.LowerHex(r.TargetEvent, 64) {
		return reject.Invalidf("a report's e tag must name a 64-hex event id")
	}
	if r.TargetEvent != "" {
		if err := a.reportable(ctx, r.TargetEvent); err != nil {
			return err
		}
	}
	if len(r.Content) > MaxReasonBytes {
		return reject.Invalidf("a report's content is longer than %d bytes", MaxReasonBytes)
	}
	raw, err := a.ev.MarshalJSON()
	if err != nil {
		return reject.Invalidf("a report that cannot be encoded")
	}
	r.Raw = string(raw)
	fresh, err := a.tx.ModerationReportsInsert(ctx, r)
	if err != nil {
		return err
	}
	if !fresh {
		return reject.Duplicatef("report %s is already queued", a.ev.ID)
	}
	return nil
}

// reportable is nil when the reporter may read event id: a report of an
// event that is not stored, deleted, of a kind only its author sees, or
// in a channel the reporter may not read answers ErrReportTarget alike,
// and nothing is queued.
func (a *apply) reportable(ctx context.Context, id string) error {
	ref, ch, role, err := a.tx.EventsGetTarget(ctx, id, a.ev.PubKey)
	if isNotFound(err) || (err == nil && (ref.Deleted || a.hiddenFrom(ref))) {
		return ErrReportTarget
	}
	if err != nil {
		return err
	}
	if ref.ChannelID != "" {
		m := access.Never
		if role != "" {
			m = access.Active
		}
		if !access.MayRead(ch.Rule(), m, true) {
			return ErrReportTarget
		}
	}
	return nil
}

// Kind 42000 product feedback, as Buzz's relay takes it
// (buzz-relay handlers/product_feedback.rs): a non-empty body of at most
// FeedbackMaxBody bytes, at most one category tag naming one of
// FeedbackCategories, the tags at most FeedbackMaxTags bytes as JSON; kept
// in the feedback table in the event's transaction, never stored as an
// event, never delivered. A repeat is a duplicate.
const (
	FeedbackMaxBody = 32 * 1024
	FeedbackMaxTags = 64 * 1024
)

// FeedbackCategories are the categories a feedback may name.
var FeedbackCategories = []string{"bug", "praise", "needs-work"}

func (a *apply) feedback(ctx context.Context) error {
	if strings.TrimSpace(a.ev.Content) == "" {
		return reject.Invalidf("feedback body must not be empty")
	}
	if len(a.ev.Content) > FeedbackMaxBody {
		return reject.Invalidf("feedback body exceeds maximum size of %d bytes", FeedbackMaxBody)
	}
	var categories []string
	for _, t := range a.ev.Tags {
		if len(t) >= 1 && t[0] == "category" {
			v := ""
			if len(t) >= 2 {
				v = t[1]
			}
			categories = append(categories, v)
		}
	}
	if len(categories) > 1 {
		return reject.Invalidf("feedback must include at most one category tag")
	}
	f := records.Feedback{EventID: a.ev.ID, Submitter: a.ev.PubKey, Body: a.ev.Content,
		EventCreatedAt: int64(a.ev.CreatedAt), ReceivedAt: a.now}
	if len(categories) == 1 {
		if !slices.Contains(FeedbackCategories, categories[0]) {
			return reject.Invalidf("unsupported feedback category; one of %v", FeedbackCategories)
		}
		f.Category = categories[0]
	}
	tags := a.ev.Tags
	if tags == nil {
		tags = nostr.Tags{}
	}
	raw, err := json.Marshal(tags)
	if err != nil {
		return reject.Invalidf("feedback tags that cannot be encoded")
	}
	if len(raw) > FeedbackMaxTags {
		return reject.Invalidf("feedback tags exceed maximum size of %d bytes", FeedbackMaxTags)
	}
	f.Tags = raw
	fresh, err := a.tx.ProductFeedbackInsert(ctx, f)
	if err != nil {
		return err
	}
	if !fresh {
		return reject.Duplicatef("feedback %s is already kept", a.ev.ID)
	}
	return nil
}
