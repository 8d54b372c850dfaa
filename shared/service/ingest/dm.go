package ingest

// Buzz's DM channels: 41010 opens a DM with the keys its p tags name,
// 41011 opens the DM of an existing one's participants plus new keys (a
// participant set never changes), 41012 hides a DM from the sender's own
// list. What they produce is relay-signed in the same transaction: the
// channel's 39000-39003, a 44100 for each participant of a new DM, and the
// participant's 30622 (NIP-DV) whenever their hidden set changes.

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// dmOpen applies a 41010.
func (a *apply) dmOpen(ctx context.Context) error {
	keys, err := nip29.DMParticipants(a.ev)
	if err != nil {
		return err
	}
	return a.openDM(ctx, keys)
}

// dmAddMember applies a 41011: h names a DM the sender is in, p the keys
// to add; the DM of the larger set is opened (or found) and the event is
// stored there.
func (a *apply) dmAddMember(ctx context.Context) error {
	ch, _, err := a.dmOfSender(ctx)
	if err != nil {
		return err
	}
	members, err := a.tx.ChannelMembersList(ctx, ch.ID)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, m := range members {
		set[m.Pubkey] = true
	}
	added := 0
	for _, t := range a.ev.Tags {
		if len(t) < 1 || t[0] != "p" {
			continue
		}
		if len(t) < 2 || !eventcheck.LowerHex(t[1], 64) {
			return reject.Invalidf("a p tag needs a 64-character lower-case hex key")
		}
		if !set[t[1]] {
			added++
		}
		set[t[1]] = true
	}
	if added == 0 {
		return reject.Invalidf("kind %d needs a p tag naming a key not already in the DM", a.ev.Kind)
	}
	keys, err := nip29.DMSet(set)
	if err != nil {
		return err
	}
	return a.openDM(ctx, keys)
}

// dmHide applies a 41012: the sender's DM named by h is hidden from their
// list; the event itself is neither stored nor delivered (the other
// participants do not learn of it), only the sender's new 30622.
func (a *apply) dmHide(ctx context.Context) error {
	ch, _, err := a.dmOfSender(ctx)
	if err != nil {
		return err
	}
	changed, err := a.tx.DMsSetHidden(ctx, ch.ID, a.ev.PubKey, a.now)
	if err != nil {
		return err
	}
	if !changed {
		return reject.Duplicatef("DM %s is already hidden", ch.ID)
	}
	a.unlisted = true
	return a.publishVisibility(ctx, a.ev.PubKey)
}

// dmOfSender loads the DM named by h, locked; a key outside it is told it
// does not exist, a member of a channel that is not a DM (isDM) that it is
// not one.
func (a *apply) dmOfSender(ctx context.Context) (*records.Channel, string, error) {
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return nil, "", err
	}
	if role == "" {
		return nil, "", noChannel(ch.ID)
	}
	if dm, err := a.isDM(ctx, ch); err != nil || !dm {
		if err == nil {
			err = reject.Invalidf("channel %s is not a DM", ch.ID)
		}
		return nil, "", err
	}
	return ch, role, nil
}

// isDM reports whether ch is a DM the DM flows made: of type dm, created
// by a 41010 or 41011 (nip29.CreatesDM). A channel that a 9007 made at a
// DM's id before that id space was reserved (nip29.IsDMID), whatever its
// type, is not one: no DM flow joins, uses or stores into it.
func (a *apply) isDM(ctx context.Context, ch *records.Channel) (bool, error) {
	if ch.Type != nip29.TypeDM {
		return false, nil
	}
	k, err := a.tx.ChannelsGetCreateKind(ctx, ch.ID)
	return nip29.CreatesDM(k), err
}

// openDM creates the DM of keys (sorted) or opens the existing one, and
// stores the event in it. A new DM makes every key a member, notifies each
// with a 44100 and publishes the channel's state; an existing one is shown
// again for the sender (their 30622 republished when it was hidden).
func (a *apply) openDM(ctx context.Context, keys []string) error {
	id := nip29.DMChannelID(keys)
	ch := &nip29.Channel{
		ID: id, Name: "DM", Type: nip29.TypeDM, Flags: nip29.DMFlags,
		Creator: a.ev.PubKey, CreatedAt: int64(a.ev.CreatedAt),
	}
	ch.Visibility = ch.Flags.Visibility()
	created, err := a.tx.ChannelsInsert(ctx, ch, a.ev.ID)
	if err != nil {
		return err
	}
	if created {
		a.saw(&records.Channel{Channel: *ch}, nip29.Member)
		for _, k := range keys {
			if err := a.tx.ChannelMembersPut(ctx, id, k, nip29.Member, a.now); err != nil {
				return err
			}
		}
		if err := a.storeInChannel(ctx, id); err != nil {
			return err
		}
		for _, k := range keys {
			if err := a.notify(ctx, ch, kinds.MemberAdded, k); err != nil {
				return err
			}
		}
		return a.publishState(ctx, ch)
	}
	row, err := a.tx.ChannelsGet(ctx, id, true)
	if err != nil {
		return err
	}
	if row.Deleted {
		return reject.Restrictedf("the DM of these participants, %s, was deleted", id)
	}
	// Only a DM the DM flows made is joined: never a channel a 9007 made
	// at this id (a third key's, which would read the DM).
	if dm, err := a.isDM(ctx, row); err != nil || !dm {
		if err == nil {
			err = reject.Restrictedf("the DM of these participants cannot be opened: its id %s is held by a channel that is not a DM (an operator can delete it)", id)
		}
		return err
	}
	role, err := a.tx.ChannelMembersGetRole(ctx, id, a.ev.PubKey)
	if err != nil {
		return err
	}
	a.saw(row, role)
	if role == "" {
		// A participant who left comes back: the set is still theirs.
		if err := a.tx.ChannelMembersPut(ctx, id, a.ev.PubKey, nip29.Member, a.now); err != nil {
			return err
		}
		if err := a.publishState(ctx, &row.Channel); err != nil {
			return err
		}
	}
	if err := a.storeInChannel(ctx, id); err != nil {
		return err
	}
	shown, err := a.tx.DMsSetHidden(ctx, id, a.ev.PubKey, 0)
	if err != nil || !shown {
		return err
	}
	return a.publishVisibility(ctx, a.ev.PubKey)
}

// publishVisibility signs viewer's 30622 (NIP-DV): d and p the viewer, one
// h per DM they have hidden, replacing the previous one.
func (a *apply) publishVisibility(ctx context.Context, viewer string) error {
	return a.replaceRelayEvent(ctx, kinds.DMVisibility, viewer, func() (nostr.Tags, error) {
		hidden, err := a.tx.DMsListHidden(ctx, viewer)
		if err != nil {
			return nil, err
		}
		tags := nostr.Tags{{"d", viewer}, {"p", viewer}}
		for _, h := range hidden {
			tags = append(tags, nostr.Tag{"h", h})
		}
		return tags, nil
	})
}
