package ingest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/access"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/nip40"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// channelID reads the h tag every moderation event needs.
func (a *apply) channelID() (string, error) {
	h, ok := nip29.ChannelTag(a.ev.Tags)
	if !ok || h == "" {
		return "", reject.Invalidf("kind %d needs an h tag naming the channel", a.ev.Kind)
	}
	return h, nil
}

// moderated loads the channel named by h, locked, with the author's role.
// The channel must exist and not be deleted.
func (a *apply) moderated(ctx context.Context) (*records.Channel, string, error) {
	h, err := a.channelID()
	if err != nil {
		return nil, "", err
	}
	ch, err := a.tx.ChannelsGet(ctx, h, true)
	if isNotFound(err) || (err == nil && ch.Deleted) {
		return nil, "", noChannel(h)
	}
	if err != nil {
		return nil, "", err
	}
	// A copy that committed while this one waited for the channel lock is
	// a repeat, not a second request.
	if dup, err := a.tx.EventsExists(ctx, a.ev.ID); err != nil || dup {
		if err == nil {
			err = reject.Duplicatef("event %s is already stored", a.ev.ID)
		}
		return nil, "", err
	}
	role, err := a.tx.ChannelMembersGetRole(ctx, h, a.ev.PubKey)
	if err != nil {
		return nil, "", err
	}
	// A DM is not there for a key outside it, whatever it sends; a hidden
	// group is not there for a non-member (NIP-29: only hidden hides
	// metadata), though a join request may still bring an invite code.
	dm := ch.Type == nip29.TypeDM
	if role == "" && (dm || (ch.Hidden && a.ev.Kind != kinds.JoinRequest)) {
		return nil, "", noChannel(h)
	}
	if err := a.archivedWrite(ch, role); err != nil {
		return nil, "", err
	}
	// Who is in a DM and what it is belong to the DM flows (41010-41012).
	if dm && !nip29.ActsOnDM(a.ev.Kind) {
		return nil, "", reject.Restrictedf("channel %s is a DM: kind %d does not act on a DM (its participants are set by kinds %d and %d)",
			h, a.ev.Kind, kinds.DMOpen, kinds.DMAddMember)
	}
	a.saw(ch, role)
	return ch, role, nil
}

// isAdmin reports whether role holds a group's privileges: owner or admin.
func isAdmin(role string) bool { return nip29.RoleRank(role) >= nip29.RoleRank(nip29.Admin) }

func requireAdmin(role string, what string) error {
	if !isAdmin(role) {
		return reject.Restrictedf("only a channel owner or admin may %s", what)
	}
	return nil
}

func (a *apply) storeInChannel(ctx context.Context, ch string) error {
	return a.store(ctx, records.EventMeta{ChannelID: ch, TopLevel: true})
}

func (a *apply) createChannel(ctx context.Context) error {
	c, err := nip29.ParseCreate(a.ev)
	if err != nil {
		return err
	}
	ch := &nip29.Channel{
		ID: c.ID, Name: c.Name, About: c.About, Picture: c.Picture,
		Type: c.Type, Visibility: c.Visibility, Labels: c.Labels,
		Creator: a.ev.PubKey, CreatedAt: int64(a.ev.CreatedAt),
		Flags: c.Flags, SupportedKinds: c.SupportedKinds, Parent: c.Parent,
	}
	if ch.Parent, err = a.keptParent(ctx, ch.ID, ch.Parent); err != nil {
		return err
	}
	created, err := a.tx.ChannelsInsert(ctx, ch, a.ev.ID)
	if err != nil {
		return err
	}
	if !created {
		return reject.Duplicatef("channel %s already exists", c.ID)
	}
	if err := a.tx.ChannelMembersPut(ctx, c.ID, a.ev.PubKey, nip29.Owner, a.now); err != nil {
		return err
	}
	if err := a.systemRow(ctx, ch, nip29.SystemRow{Type: nip29.SystemChannelCreated, Actor: a.ev.PubKey}); err != nil {
		return err
	}
	return a.finish(ctx, ch, 0, "")
}

func (a *apply) editChannel(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	// A client may edit by sending back the group's 39000 (welshman): its
	// identity tag ["t", <type>] is an echo, not a label.
	edit := *a.ev
	edit.Tags = nip29.WithoutTypeEcho(a.ev.Tags, &ch.Channel)
	e, err := nip29.ParseEdit(&edit)
	if err != nil {
		return err
	}
	if err := requireAdmin(role, "edit channel metadata"); err != nil {
		return err
	}
	c := ch.Channel
	if e.Name != nil {
		c.Name = *e.Name
	}
	if e.About != nil {
		c.About = *e.About
	}
	if e.Picture != nil {
		c.Picture = *e.Picture
	}
	if e.Flags != nil {
		c.Flags = *e.Flags
	} else if e.Visibility != nil {
		c.Flags = nip29.VisibilityFlags(*e.Visibility)
	}
	c.Visibility = c.Flags.Visibility()
	if e.LabelsSet {
		c.Labels = e.Labels
	}
	if e.KindsSet {
		c.SupportedKinds = e.SupportedKinds
	}
	if e.ParentSet {
		if c.Parent, err = a.keptParent(ctx, c.ID, e.Parent); err != nil {
			return err
		}
	}
	if e.Archived != nil {
		c.Archived = *e.Archived
	}
	if err := a.tx.ChannelsUpdate(ctx, &c, a.now); err != nil {
		return err
	}
	// Buzz's timeline rows for what changed: the archive, then the
	// visibility.
	var rows []nip29.SystemRow
	if c.Archived != ch.Archived {
		row := nip29.SystemRow{Type: nip29.SystemChannelArchived, Actor: a.ev.PubKey}
		if !c.Archived {
			row.Type = nip29.SystemChannelUnarchived
		}
		rows = append(rows, row)
	}
	if c.Visibility != ch.Visibility {
		rows = append(rows, nip29.SystemRow{Type: nip29.SystemVisibilityChanged, Actor: a.ev.PubKey, Visibility: c.Visibility})
	}
	for _, row := range rows {
		if err := a.systemRow(ctx, &c, row); err != nil {
			return err
		}
	}
	return a.finish(ctx, &c, 0, "")
}

// archivedWrite is the archive's one rule (Buzz's): an archived channel
// takes no write but the 9002 that unarchives it; reads go on. A sender
// who may not read the channel (role "", not a member) is told it does not
// exist, as of any channel it may not know.
func (a *apply) archivedWrite(ch *records.Channel, role string) error {
	if !ch.Archived || nip29.Unarchives(a.ev.Kind, a.ev.Tags) {
		return nil
	}
	if role == "" && !access.Reaches(ch.Rule(), access.Never) {
		return noChannel(ch.ID)
	}
	return reject.Invalidf("channel %s is archived", ch.ID)
}

func (a *apply) putUser(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	p, err := nip29.ParsePutUser(a.ev)
	if err != nil {
		return err
	}
	current, err := a.tx.ChannelMembersGetRole(ctx, ch.ID, p.Pubkey)
	if err != nil {
		return err
	}
	// A 9000 without a role keeps an existing member's role: a re-add,
	// which a member may also send for themselves. It changes nothing.
	if p.Role == "" && current != "" {
		if p.Pubkey != a.ev.PubKey {
			if err := requireAdmin(role, "add users or change roles"); err != nil {
				return err
			}
		}
		return a.storeInChannel(ctx, ch.ID)
	}
	if p.Role == "" {
		p.Role = nip29.Member
	}
	if err := requireAdmin(role, "add users or change roles"); err != nil {
		return err
	}
	if nip29.RoleRank(p.Role) > nip29.RoleRank(role) {
		return reject.Restrictedf("a channel %s cannot grant the %s role", role, p.Role)
	}
	if current == p.Role {
		return reject.Duplicatef("%s already has the %s role", short(p.Pubkey), p.Role)
	}
	if current == nip29.Owner {
		if role != nip29.Owner {
			return reject.Restrictedf("only an owner may change an owner's role")
		}
		if err := a.keepAnOwner(ctx, ch.ID, p.Pubkey); err != nil {
			return err
		}
	}
	if err := a.tx.ChannelMembersPut(ctx, ch.ID, p.Pubkey, p.Role, a.now); err != nil {
		return err
	}
	notify := 0
	if current == "" {
		notify = kinds.MemberAdded
		if err := a.systemRow(ctx, &ch.Channel, nip29.SystemRow{Type: nip29.SystemMemberJoined, Actor: a.ev.PubKey, Target: p.Pubkey}); err != nil {
			return err
		}
	}
	return a.finish(ctx, &ch.Channel, notify, p.Pubkey)
}

// keepAnOwner refuses a change that would leave the channel without an
// owner once leaving is gone.
func (a *apply) keepAnOwner(ctx context.Context, channel, leaving string) error {
	members, err := a.tx.ChannelMembersList(ctx, channel)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.Role == nip29.Owner && m.Pubkey != leaving {
			return nil
		}
	}
	return reject.Restrictedf("the last owner cannot leave, be removed or be demoted; make another member owner first")
}

func (a *apply) removeUser(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	target, err := nip29.Target(a.ev)
	if err != nil {
		return err
	}
	if err := requireAdmin(role, "remove users"); err != nil {
		return err
	}
	current, err := a.tx.ChannelMembersGetRole(ctx, ch.ID, target)
	if err != nil {
		return err
	}
	if current == "" {
		return reject.Invalidf("%s is not a member of channel %s", short(target), ch.ID)
	}
	if current == nip29.Owner {
		if role != nip29.Owner {
			return reject.Restrictedf("only an owner may remove an owner")
		}
		if err := a.keepAnOwner(ctx, ch.ID, target); err != nil {
			return err
		}
	}
	if err := a.tx.ChannelMembersDelete(ctx, ch.ID, target, a.now); err != nil {
		return err
	}
	row := nip29.SystemRow{Type: nip29.SystemMemberRemoved, Actor: a.ev.PubKey, Target: target}
	if target == a.ev.PubKey {
		row.Type = nip29.SystemMemberLeft
	}
	if err := a.systemRow(ctx, &ch.Channel, row); err != nil {
		return err
	}
	return a.finish(ctx, &ch.Channel, kinds.MemberRemoved, target)
}

// join applies a 9021 (NIP-29): a member's is a duplicate; a valid invite
// code admits at once, whatever the flags; a group that is not closed
// admits; a closed group's request without a code is kept for the admins
// (readable under the group's read rule) and refused as pending review;
// a wrong code is refused for good.
func (a *apply) join(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	if role != "" {
		return reject.Duplicatef("already a member of group %s", ch.ID)
	}
	code, hasCode := filter.TagValue(a.ev.Tags, "code")
	valid := false
	if hasCode && code != "" {
		if valid, err = a.tx.GroupInvitesCheck(ctx, ch.ID, code, a.now); err != nil {
			return err
		}
	}
	switch {
	case valid:
	case ch.Hidden:
		return noChannel(ch.ID)
	case hasCode:
		return reject.Restrictedf("the invite code is not valid for group %s (final: ask an admin for a new one)", ch.ID)
	case ch.Closed:
		if err := a.storeInChannel(ctx, ch.ID); err != nil {
			return err
		}
		a.verdict = reject.Restrictedf("group %s is closed: your join request is pending review by its admins", ch.ID)
		return nil
	}
	if err := a.tx.ChannelMembersPut(ctx, ch.ID, a.ev.PubKey, nip29.Member, a.now); err != nil {
		return err
	}
	if err := a.systemRow(ctx, &ch.Channel, nip29.SystemRow{Type: nip29.SystemMemberJoined, Actor: a.ev.PubKey, Target: a.ev.PubKey}); err != nil {
		return err
	}
	return a.finish(ctx, &ch.Channel, kinds.MemberAdded, a.ev.PubKey)
}

// createInvite applies a 9009 (NIP-29 create-invite): an owner or admin
// stores one or more codes, usable until a 9005 of this 9009 revokes them
// or its NIP-40 expiration passes. The event itself is not stored or
// delivered: the group's readers would read its codes.
func (a *apply) createInvite(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	var codes []string
	for _, t := range a.ev.Tags {
		if len(t) >= 1 && t[0] == "code" {
			if len(t) < 2 || t[1] == "" || len(t[1]) > nip29.MaxInviteCodeLength {
				return reject.Invalidf("a code tag needs a code of 1 to %d characters", nip29.MaxInviteCodeLength)
			}
			codes = append(codes, t[1])
		}
	}
	if len(codes) == 0 {
		return reject.Invalidf("create-invite needs a code tag")
	}
	expires, _, err := nip40.Expiration(a.ev.Tags)
	if err != nil {
		return err
	}
	if err := requireAdmin(role, "create invites"); err != nil {
		return err
	}
	for _, c := range codes {
		if _, err := a.tx.GroupInvitesPut(ctx, records.GroupInvite{Channel: ch.ID, Code: c, EventID: a.ev.ID, CreatedBy: a.ev.PubKey,
			CreatedAt: int64(a.ev.CreatedAt), ExpiresAt: expires}); err != nil {
			return err
		}
	}
	a.unlisted = true
	return nil
}

// keptParent is the parent a 9007 or 9002 of group keeps (NIP-29
// subgroups): parent when the sender is an owner or admin of it, a live
// group; otherwise "", a root. A parent that does not exist, is deleted, or
// is a group the sender does not manage (hidden or not) all make the same
// root, so the answer and the 39000 tell nothing about the group named, and
// no key attaches subgroups under another's group. Of a kept parent, a
// cycle or too deep a chain is refused; a group naming itself always is.
func (a *apply) keptParent(ctx context.Context, group, parent string) (string, error) {
	if parent == "" {
		return "", nil
	}
	if parent == group {
		return "", reject.Invalidf("a group cannot be its own parent")
	}
	ch, role, err := a.tx.ChannelsGetWithRole(ctx, parent, a.ev.PubKey)
	if isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if ch.Deleted || !isAdmin(role) {
		return "", nil
	}
	chain, err := a.tx.ChannelsListParentChain(ctx, parent, nip29.MaxGroupDepth)
	if err != nil {
		return "", err
	}
	for _, id := range chain {
		if id == group {
			return "", reject.Invalidf("parent %s would make a cycle: it is under group %s", parent, group)
		}
	}
	if len(chain) >= nip29.MaxGroupDepth {
		return "", reject.Invalidf("parent %s is nested too deep (at most %d levels)", parent, nip29.MaxGroupDepth)
	}
	return parent, nil
}

func (a *apply) leave(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	if role == "" {
		// A group the sender may not read does not exist for them.
		if !access.Reaches(ch.Rule(), access.Never) {
			return noChannel(ch.ID)
		}
		return reject.Invalidf("not a member of channel %s", ch.ID)
	}
	if role == nip29.Owner {
		if err := a.keepAnOwner(ctx, ch.ID, a.ev.PubKey); err != nil {
			return err
		}
	}
	if err := a.tx.ChannelMembersDelete(ctx, ch.ID, a.ev.PubKey, a.now); err != nil {
		return err
	}
	if err := a.systemRow(ctx, &ch.Channel, nip29.SystemRow{Type: nip29.SystemMemberLeft, Actor: a.ev.PubKey}); err != nil {
		return err
	}
	return a.finish(ctx, &ch.Channel, kinds.MemberRemoved, a.ev.PubKey)
}

func (a *apply) deleteChannel(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	if role != nip29.Owner {
		return reject.Restrictedf("only a channel owner may delete the channel")
	}
	if err := a.storeInChannel(ctx, ch.ID); err != nil {
		return err
	}
	if err := a.tx.ChannelsDelete(ctx, ch.ID, a.now); err != nil {
		return err
	}
	if err := a.systemRow(ctx, &ch.Channel, nip29.SystemRow{Type: nip29.SystemChannelDeleted, Actor: a.ev.PubKey}); err != nil {
		return err
	}
	// Its subgroups become roots (NIP-29): their 39000 drops the parent.
	children, err := a.tx.ChannelsListChildren(ctx, ch.ID)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := a.publishState(ctx, &c.Channel); err != nil {
			return err
		}
	}
	return nil
}

func (a *apply) moderationDelete(ctx context.Context) error {
	ch, role, err := a.moderated(ctx)
	if h, herr := a.channelID(); err != nil && herr == nil && err.Error() == noChannel(h).Error() {
		// A channel that is missing or not there for the sender: the
		// answer a missing target gets (Buzz's one deletion answer).
		return ErrDeletionTarget
	}
	if err != nil {
		return err
	}
	targets := nip29.Targets(kinds.DeleteEvent, a.ev.Tags)
	if len(targets) == 0 {
		return reject.Invalidf("delete-event needs at least one e tag naming the event")
	}
	// Before any target is looked up: a non-member of a private channel
	// learns nothing about its events. From here every target the sender
	// may not delete answers as a missing one (ErrDeletionTarget).
	if err := mayWrite(ch, role, ch.ID); err != nil {
		return ErrDeletionTarget
	}
	admin := isAdmin(role)
	refs := make([]*records.EventRef, 0, len(targets))
	for _, id := range targets {
		ref, err := a.tx.EventsGet(ctx, id)
		if isNotFound(err) && admin {
			// A 9005 of a 9009 revokes its invite codes.
			n, rerr := a.tx.GroupInvitesRevoke(ctx, ch.ID, id, a.now)
			if rerr != nil {
				return rerr
			}
			if n > 0 {
				continue
			}
		}
		if isNotFound(err) || (err == nil && (ref.ChannelID != ch.ID || (ref.Pubkey != a.ev.PubKey && !admin))) {
			return ErrDeletionTarget
		}
		if err != nil {
			return err
		}
		if kinds.RelayOnly(ref.Kind) {
			return reject.Restrictedf("event %s is signed by the relay and cannot be deleted", id)
		}
		if err := undeletable(ref); err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	if err := a.storeInChannel(ctx, ch.ID); err != nil {
		return err
	}
	for _, ref := range refs {
		fresh, err := a.hide(ctx, ref)
		if err != nil {
			return err
		}
		// A target deleted already gets no second row (Buzz's relay skips
		// it: no false audit record).
		if fresh {
			if err := a.systemRow(ctx, &ch.Channel, nip29.Deleted(a.ev.PubKey, ref.ID, a.ev.Tags)); err != nil {
				return err
			}
		}
	}
	return nil
}

// hide marks a target deleted and takes a deleted reply out of its thread's
// counters; fresh is false when it was deleted already.
func (a *apply) hide(ctx context.Context, ref *records.EventRef) (fresh bool, err error) {
	fresh, err = a.tx.EventsSetDeleted(ctx, ref.ID, a.now)
	if err != nil || !fresh {
		return fresh, err
	}
	if ref.HasThread && ref.ParentID != "" {
		return true, a.tx.ThreadMetadataDeleteReply(ctx, ref.RootID, ref.ParentID)
	}
	return true, nil
}

// systemRow signs Buzz's timeline row (kind 40099) for a change of ch, in
// this transaction: it commits with the change or not at all. A system
// channel and a DM get none (their membership is the relay's, as their
// 44100s are not sent).
func (a *apply) systemRow(ctx context.Context, ch *nip29.Channel, row nip29.SystemRow) error {
	if ch.Type == nip29.TypeSystem || ch.Type == nip29.TypeDM {
		return nil
	}
	content, err := row.Content()
	if err != nil {
		return err
	}
	_, err = a.sign(ctx, kinds.SystemMessage, a.now, nip29.SystemTags(ch.ID), content,
		records.EventMeta{ChannelID: ch.ID, TopLevel: true})
	return err
}

// finish stores the moderation event itself, notifies target with a
// 44100/44101 when notify names one, and republishes the channel's state.
func (a *apply) finish(ctx context.Context, ch *nip29.Channel, notify int, target string) error {
	if err := a.storeInChannel(ctx, ch.ID); err != nil {
		return err
	}
	if notify != 0 {
		if err := a.notify(ctx, ch, notify, target); err != nil {
			return err
		}
	}
	return a.publishState(ctx, ch)
}

// notify publishes a 44100/44101 for target; never for system channels.
// Its content is what Buzz clients parse:
// {"type":"member_added"|"member_removed","channel_id":"<uuid>"}.
func (a *apply) notify(ctx context.Context, ch *nip29.Channel, kind int, target string) error {
	if ch.Type == nip29.TypeSystem {
		return nil
	}
	typ := "member_added"
	if kind == kinds.MemberRemoved {
		typ = "member_removed"
	}
	content, err := json.Marshal(struct {
		Type      string `json:"type"`
		ChannelID string `json:"channel_id"`
	}{typ, ch.ID})
	if err != nil {
		return fmt.Errorf("ingest: encode kind %d content: %w", kind, err)
	}
	_, err = a.sign(ctx, kind, a.now, nostr.Tags{{"p", target}, {"h", ch.ID}}, string(content),
		records.EventMeta{ChannelID: ch.ID, TopLevel: true})
	return err
}

// publishState signs fresh 39000/39001/39002 heads for ch, replacing the
// previous ones; each created_at is max(now, previous+1).
func (a *apply) publishState(ctx context.Context, ch *nip29.Channel) error {
	members, err := a.tx.ChannelMembersList(ctx, ch.ID)
	if err != nil {
		return err
	}
	published := *ch
	if published.Parent, err = a.tx.ChannelsGetLiveParent(ctx, ch.Parent); err != nil {
		return err
	}
	for _, k := range []int{kinds.GroupMetadata, kinds.GroupAdmins, kinds.GroupMembers, kinds.GroupRoles} {
		var tags nostr.Tags
		switch k {
		case kinds.GroupMetadata:
			if ch.Type == nip29.TypeDM {
				tags = nip29.DMMetadataTags(&published, members)
			} else {
				tags = nip29.MetadataTags(&published)
				if t := livekit.MetadataTag(a.s.livekit, ch.Type); t != nil {
					tags = append(tags, t)
				}
			}
		case kinds.GroupRoles:
			tags = nip29.RolesTags(ch)
		case kinds.GroupAdmins:
			tags = nip29.AdminsTags(ch, members)
		default:
			tags = nip29.MembersTags(ch, members)
		}
		prevAt, prevID, ok, err := a.tx.ChannelStateHeadsGet(ctx, ch.ID, k)
		if err != nil {
			return err
		}
		if ok && k == kinds.GroupRoles {
			continue // the roles are the same for every group: published once
		}
		at := a.now
		if ok && at <= prevAt {
			at = prevAt + 1
		}
		ev, err := a.sign(ctx, k, at, tags, "", records.EventMeta{ChannelID: ch.ID, DTag: ch.ID, TopLevel: true})
		if err != nil {
			return err
		}
		if ok {
			if err := a.tx.EventsDelete(ctx, []string{prevID}); err != nil {
				return err
			}
		}
		if err := a.tx.ChannelStateHeadsPut(ctx, ch.ID, k, ev.ID, at); err != nil {
			return err
		}
	}
	return nil
}
