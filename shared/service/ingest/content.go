package ingest

import (
	"context"
	"strconv"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// MaxDepth caps thread depth; deeper replies are stored at this depth.
const MaxDepth = store.MaxThreadDepth

// writable checks that the author may post into channel h: it exists, is not
// deleted, and is open or has the author as an active member.
func (a *apply) writable(ctx context.Context, h string) (*records.Channel, error) {
	ch, role, err := a.tx.ChannelsGetWithRole(ctx, h, a.ev.PubKey)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if err := mayWrite(ch, role, h); err != nil {
		return nil, err
	}
	a.saw(ch, role)
	return ch, nil
}

// seenChannel is a channel this attempt read, with the sender's role in it.
type seenChannel struct {
	ch   *records.Channel
	role string
}

// saw remembers a channel row this attempt read and the sender's role in
// it, so filing the event there (filable) need not read them again.
func (a *apply) saw(ch *records.Channel, role string) {
	if ch == nil {
		return
	}
	if a.channels == nil {
		a.channels = map[string]seenChannel{}
	}
	a.channels[ch.ID] = seenChannel{ch, role}
}

// filable applies the rules every client event filed in a group obeys
// beyond its kind's write rule, whichever rule files it (message, reaction,
// edit, vote, deletion, replaceable, ephemeral, 9005): the group's
// supported_kinds (NIP-29) refuse a kind that is content there
// (nip29.Content). store asks it for every event it files in a channel;
// an ephemeral event, never stored, asks it too.
func (a *apply) filable(ctx context.Context, channel string) error {
	seen, ok := a.channels[channel]
	if !nip29.Content(a.ev.Kind, false) {
		return nil // the group's management (moderated applied its rules): never content
	}
	if !ok {
		ch, role, err := a.tx.ChannelsGetWithRole(ctx, channel, a.ev.PubKey)
		if isNotFound(err) {
			return noChannel(channel)
		}
		if err != nil {
			return err
		}
		seen = seenChannel{ch, role}
	}
	// The archive refuses what names the channel in its h tag, as Buzz's
	// relay decides it (a kind 5 without one still deletes there).
	if h, ok := nip29.ChannelTag(a.ev.Tags); ok && h == channel {
		if err := a.archivedWrite(seen.ch, seen.role); err != nil {
			return err
		}
	}
	if nip29.Content(a.ev.Kind, isAdmin(seen.role)) && !nip29.Supports(seen.ch.SupportedKinds, a.ev.Kind) {
		return reject.Restrictedf("group %s does not take kind %d (supported_kinds)", channel, a.ev.Kind)
	}
	return nil
}

// mayWrite applies the write rule to a channel row (nil when missing) and
// the author's role in it. A missing channel and a private one the author
// is not a member of get the same refusal: it is no oracle for what exists.
func mayWrite(ch *records.Channel, role, h string) error {
	m := access.Never
	if role != "" {
		m = access.Active
	}
	if !access.MayWrite(ch.Rule(), m) {
		return noChannel(h)
	}
	return nil
}

// noChannel is the one refusal for a channel that does not exist, is
// deleted, or is private to the sender.
func noChannel(h string) error {
	return reject.Restrictedf("channel %s does not exist or you are not a member", h)
}

// The one answer of each write path that names another event, whether
// the event does not exist or exists and is not the sender's to use
// (deleted, in a channel they may not reach or another than the one the
// write names, of a kind only its author sees, someone else's to edit or
// delete): Buzz's wording (block/buzz e2e_existence_oracle and
// e2e_author_only_deletion require one answer for all of them). None
// names the id or a channel. docs/reference.md's door table lists them.
var (
	ErrDeletionTarget = reject.Invalidf("deletion target not found or not deletable by you")
	ErrReactionTarget = reject.Invalidf("reaction target event not found")
	ErrEditTarget     = reject.Invalidf("edit target not found or not editable by you")
	ErrReplyParent    = reject.Invalidf("reply parent not found")
	ErrReportTarget   = reject.Invalidf("report target event not found")
	ErrVoteTarget     = reject.Invalidf("vote target event not found")
)

// MaxReactionsPerAuthor bounds the reactions one key keeps on one event
// (a reaction is one per author and content), so the aux closure of a
// window grows with the number of reacting keys, not with one key's
// persistence.
const MaxReactionsPerAuthor = relayinfo.MaxReactionsPerKey

// message stores a channel message or a plain note, with its thread position.
func (a *apply) message(ctx context.Context) error {
	h, hasH := nip29.ChannelTag(a.ev.Tags)
	if !hasH || h == "" {
		if kinds.InChannel(a.ev.Kind) {
			return reject.Invalidf("kind %d needs an h tag naming its channel", a.ev.Kind)
		}
		return a.store(ctx, records.EventMeta{TopLevel: true, Search: kinds.Searchable(a.ev.Kind), Last: true})
	}
	row := &records.Thread{}
	top := true
	r, isReply := nip29.ParseReply(a.ev.Tags)
	if !isReply {
		if _, err := a.writable(ctx, h); err != nil {
			return err
		}
	} else {
		// One lookup gives the parent, its channel and the author's role.
		parent, ch, role, err := a.tx.EventsGetTarget(ctx, r.Parent, a.ev.PubKey)
		if isNotFound(err) || (err == nil && (parent.ChannelID != h || parent.Deleted || !parent.HasThread || a.hiddenFrom(parent))) {
			if _, werr := a.writable(ctx, h); werr != nil {
				return werr
			}
			return ErrReplyParent
		}
		if err != nil {
			return err
		}
		if err := mayWrite(ch, role, h); err != nil {
			return err
		}
		a.saw(ch, role)
		root := parent.RootID
		if parent.Depth == 0 || root == "" {
			root = parent.ID
		}
		if r.Root != "" && r.Root != root {
			return reject.Invalidf("root tag %s does not match the parent's thread root %s", r.Root, root)
		}
		row.ParentID, row.RootID = parent.ID, root
		row.Depth = min(parent.Depth+1, MaxDepth)
		row.Broadcast = r.Broadcast && row.Depth == 1
		top = row.Broadcast
	}
	return a.store(ctx, records.EventMeta{ChannelID: h, TopLevel: top, Search: kinds.Searchable(a.ev.Kind), Thread: row, Last: true})
}

// target loads the event a reaction, edit or vote points at, and checks
// an optional h against the target's channel and the author's right to
// write there: missing is the path's one answer (ErrReactionTarget, ...)
// for a target that is not stored, deleted, of a kind only its author
// sees, in a channel the sender may not write to, or in another channel
// than the h names.
func (a *apply) target(ctx context.Context, id, what string, missing error) (*records.EventRef, error) {
	if !eventcheck.LowerHex(id, 64) {
		return nil, reject.Invalidf("%s target %q is not a 64-hex event id", what, id)
	}
	ref, ch, role, err := a.tx.EventsGetTarget(ctx, id, a.ev.PubKey)
	if isNotFound(err) || (err == nil && (ref.Deleted || a.hiddenFrom(ref))) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	if ref.ChannelID != "" && mayWrite(ch, role, ref.ChannelID) != nil {
		return nil, missing
	}
	if h, ok := nip29.ChannelTag(a.ev.Tags); ok && h != ref.ChannelID {
		return nil, missing
	}
	a.saw(ch, role)
	return ref, nil
}

func (a *apply) reaction(ctx context.Context) error {
	ids := nip29.Targets(kinds.Reaction, a.ev.Tags)
	if len(ids) == 0 || ids[0] == "" {
		return reject.Invalidf("reaction needs an e tag naming its target")
	}
	ref, err := a.target(ctx, ids[0], "reaction", ErrReactionTarget)
	if err != nil {
		return err
	}
	n, same, err := a.tx.EventsCountReactions(ctx, ref.ID, a.ev.PubKey, a.ev.Content)
	if err != nil {
		return err
	}
	if same {
		return reject.Duplicatef("you already reacted %q to %s", short(a.ev.Content), ref.ID)
	}
	if n >= MaxReactionsPerAuthor {
		return reject.New(reject.RateLimited, "%d reactions to %s from one key is the limit", MaxReactionsPerAuthor, ref.ID)
	}
	return a.store(ctx, records.EventMeta{ChannelID: ref.ChannelID, TopLevel: true, Last: true})
}

func (a *apply) edit(ctx context.Context) error {
	ids := nip29.Targets(kinds.Edit, a.ev.Tags)
	if len(ids) == 0 {
		return reject.Invalidf("edit needs an e tag naming the edited event")
	}
	id := ids[0]
	ref, err := a.target(ctx, id, "edit", ErrEditTarget)
	if err != nil {
		return err
	}
	if ref.Pubkey != a.ev.PubKey {
		return ErrEditTarget
	}
	return a.store(ctx, records.EventMeta{ChannelID: ref.ChannelID, TopLevel: true, Search: true, Last: true})
}

// deletion applies a NIP-09 kind 5 with exactly one e or a target, which
// only its author may delete.
func (a *apply) deletion(ctx context.Context) error {
	var targets [][]string
	for _, t := range a.ev.Tags {
		if len(t) >= 2 && (t[0] == "e" || t[0] == "a") {
			targets = append(targets, t)
		}
	}
	if len(targets) != 1 {
		return reject.Invalidf("a deletion must name exactly one target (e or a tag), this one names %d", len(targets))
	}
	t := targets[0]
	if t[0] == "a" {
		return a.deleteAddress(ctx, t[1])
	}
	ref, ch, role, err := a.tx.EventsGetTarget(ctx, t[1], a.ev.PubKey)
	if isNotFound(err) || (err == nil && a.hiddenFrom(ref)) {
		return ErrDeletionTarget
	}
	if err != nil {
		return err
	}
	// Someone else's event, or the author's in a channel they may no
	// longer write to (removed from it): the answer a missing id gets.
	if ref.Pubkey != a.ev.PubKey || (ref.ChannelID != "" && mayWrite(ch, role, ref.ChannelID) != nil) {
		return ErrDeletionTarget
	}
	a.saw(ch, role)
	if err := undeletable(ref); err != nil {
		return err
	}
	if !kinds.Gated(ref.Kind) { // see gatedDeletion
		if err := a.store(ctx, records.EventMeta{ChannelID: ref.ChannelID, TopLevel: true}); err != nil {
			return err
		}
	}
	_, err = a.hide(ctx, ref)
	return err
}

// undeletable refuses a deletion of a deletion: NIP-09 gives it no effect,
// and the first deletion stays readable.
func undeletable(ref *records.EventRef) error {
	if kinds.Deletes(ref.Kind) {
		return reject.Invalidf("event %s is a deletion, and a deletion cannot be deleted", ref.ID)
	}
	return nil
}

func (a *apply) deleteAddress(ctx context.Context, addr string) error {
	parts := strings.SplitN(addr, ":", 3)
	if len(parts) != 3 {
		return reject.Invalidf("a tag %q must be kind:pubkey:d", addr)
	}
	kind, err := strconv.Atoi(parts[0])
	if err != nil || kind < 0 || kind > kinds.Max {
		return reject.Invalidf("a tag %q has no valid kind", addr)
	}
	if parts[1] != a.ev.PubKey {
		return ErrDeletionTarget
	}
	// The deletion lives in its target's channel, as an e deletion does, so
	// it is read under that channel's access rule and never leaks the
	// address of an event in a private channel.
	channel, err := a.tx.EventsGetAddressChannel(ctx, kind, parts[1], parts[2])
	if err != nil {
		return err
	}
	if !kinds.Gated(kind) { // see gatedDeletion
		if err := a.store(ctx, records.EventMeta{ChannelID: channel, TopLevel: true}); err != nil {
			return err
		}
	}
	if _, err = a.tx.EventsSetAddressDeleted(ctx, kind, parts[1], parts[2], int64(a.ev.CreatedAt), a.now); err != nil {
		return err
	}
	if kind == kinds.WorkflowDef {
		return a.workflowDeleted(ctx, parts[1], parts[2])
	}
	return nil
}

// replaceable keeps only the newest replaceable event per author and kind
// and the newest addressable one per author, kind and d tag (ties: the
// lower id wins, as NIP-01 says). One with a group's h lives in the group
// (under its write rule), except the personal kinds, whose h is ignored.
func (a *apply) replaceable(ctx context.Context) error {
	d := ""
	if kinds.InAddressableRange(a.ev.Kind) {
		v, ok := filter.TagValue(a.ev.Tags, "d")
		if !ok {
			return reject.Invalidf("kind %d is addressable and needs a d tag", a.ev.Kind)
		}
		d = v
	}
	meta := records.EventMeta{DTag: d, TopLevel: true, Search: kinds.Searchable(a.ev.Kind)}
	if h, ok := nip29.ChannelTag(a.ev.Tags); ok && !kinds.Personal(a.ev.Kind) {
		if _, err := a.writable(ctx, h); err != nil {
			return err
		}
		meta.ChannelID = h
	}
	// Concurrent versions of one address serialize here, so only the
	// newest survives.
	if err := a.tx.EventsLockAddress(ctx, a.ev.Kind, a.ev.PubKey, d); err != nil {
		return err
	}
	prev, err := a.tx.EventsListAddress(ctx, a.ev.Kind, a.ev.PubKey, d)
	if err != nil {
		return err
	}
	var old []string
	for _, p := range prev {
		if p.ID == a.ev.ID {
			return reject.Duplicatef("event %s is already stored", a.ev.ID)
		}
		if p.CreatedAt > int64(a.ev.CreatedAt) || (p.CreatedAt == int64(a.ev.CreatedAt) && p.ID < a.ev.ID) {
			return reject.Duplicatef("a newer version of this kind %d event is stored", a.ev.Kind)
		}
		old = append(old, p.ID)
	}
	if err := a.tx.EventsDelete(ctx, old); err != nil {
		return err
	}
	return a.store(ctx, meta)
}

// ephemeral checks an ephemeral event (NIP-01 20000-29999) without storing
// it: one with an h tag needs a channel its author may write to. Submit
// hands it to live fan-out like a stored event.
func (a *apply) ephemeral(ctx context.Context) error {
	if kinds.RecipientOnly(a.ev.Kind) {
		if err := a.recipientEphemeral(); err != nil {
			return err
		}
	}
	if h, ok := nip29.ChannelTag(a.ev.Tags); ok {
		if _, err := a.writable(ctx, h); err != nil {
			return err
		}
		return a.filable(ctx, h)
	}
	return nil
}

// giftWrap stores a NIP-59 gift wrap (or another client-sent recipient-only
// kind: Buzz's 44200) outside any channel, never indexed for search; reads
// give it only to its p recipient (query's access rule).
func (a *apply) giftWrap(ctx context.Context) error {
	p, ok := filter.TagValue(a.ev.Tags, "p")
	if !ok || !eventcheck.LowerHex(p, 64) {
		if a.ev.Kind == kinds.GiftWrap {
			return reject.Invalidf("a gift wrap needs a p tag naming its recipient's 64-hex public key")
		}
		return reject.Invalidf("kind %d needs a p tag naming its recipient's 64-hex public key", a.ev.Kind)
	}
	return a.store(ctx, records.EventMeta{TopLevel: true, Last: true})
}
