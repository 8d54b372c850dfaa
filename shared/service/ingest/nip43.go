package ingest

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-43 relay membership, as Buzz's relay runs it (handlers/relay_admin.rs,
// the 28936 path of ingest.rs): 9030-9033 from the community's owners (its
// operators) and admins, and a member's 28936 leave request, are executed
// and never stored; a change publishes, in the same transaction, the
// relay-signed 8000 or 8001 delta and the 13534 list (side_effects.rs),
// delivered live like any relay-signed event. Rules are shared/domain/nip43's.

// relayCommand runs 9030 (add), 9031 (remove) or 9032 (change role).
func (a *apply) relayCommand(ctx context.Context) error {
	c, err := nip43.Parse(a.ev, a.now)
	if err != nil {
		return err
	}
	sender, _, err := a.tx.RelayMembersGetRoleEnforced(ctx, a.ev.PubKey)
	if err != nil {
		return err
	}
	target, _, err := a.tx.RelayMembersGetRoleEnforced(ctx, c.Target)
	if err != nil {
		return err
	}
	if err := nip43.Decide(c, sender, target, c.Target == a.ev.PubKey); err != nil {
		return err
	}
	a.unlisted = true
	switch c.Kind {
	case kinds.RelayAddMember:
		if target != "" { // a re-add changes nothing, publishes nothing
			return nil
		}
		added, err := a.tx.RelayMembersInsert(ctx, c.Target, c.Role, a.ev.PubKey, a.now)
		if err != nil || !added {
			return err
		}
		return a.publishMembership(ctx, kinds.RelayMemberAdded, c.Target)
	case kinds.RelayRemoveMember:
		removed, err := a.tx.RelayMembersDelete(ctx, c.Target, nip43.Removable(sender))
		if err != nil {
			return err
		}
		if !removed { // gone or promoted since it was read
			return reject.Restrictedf("%s is no longer a member this key may remove", c.Target)
		}
		return a.publishMembership(ctx, kinds.RelayMemberRemoved, c.Target)
	}
	changed, err := a.tx.RelayMembersSetRole(ctx, c.Target, c.Role)
	if err != nil {
		return err
	}
	if !changed {
		return nip43.Decide(c, sender, "", false)
	}
	return a.publishMembership(ctx, 0, "")
}

// setProfile runs 9033 (NIP-WP): an owner or admin sets the community's
// icon (NIP-11's) and NIP-CW's thread_replies_in_channel; a 9033 naming
// neither clears the icon (Buzz's older form).
func (a *apply) setProfile(ctx context.Context) error {
	if err := nip43.Fresh(int64(a.ev.CreatedAt), a.now); err != nil {
		return err
	}
	sender, _, err := a.tx.RelayMembersGetRoleEnforced(ctx, a.ev.PubKey)
	if err != nil {
		return err
	}
	if !nip43.Steward(sender) {
		return reject.Restrictedf("setting the workspace profile is for owners and admins")
	}
	icon, hasIcon := filter.TagValue(a.ev.Tags, "icon")
	v, hasMode := filter.TagValue(a.ev.Tags, "thread_replies_in_channel")
	var on bool
	if hasMode {
		if on, err = nip43.ParseSwitch(v); err != nil {
			return err
		}
	}
	if err := nip43.CheckIcon(icon); err != nil {
		return err
	}
	a.unlisted = true
	if hasIcon || !hasMode {
		if err := a.tx.CommunitiesSetPicture(ctx, icon); err != nil {
			return err
		}
		a.profiled = true
	}
	if hasMode {
		return a.tx.CommunitiesSetThreadReplies(ctx, on)
	}
	return nil
}

// leaveRelay runs a 28936: a member or admin of a community that enforces
// membership leaves it (8001, 13534); its subscriptions end.
func (a *apply) leaveRelay(ctx context.Context) error {
	role, enforced, err := a.tx.RelayMembersGetRoleEnforced(ctx, a.ev.PubKey)
	if err != nil {
		return err
	}
	if err := nip43.CheckLeave(a.ev, enforced, a.now); err != nil {
		return err
	}
	if err := nip43.Leave(role); err != nil {
		return err
	}
	removed, err := a.tx.RelayMembersDelete(ctx, a.ev.PubKey, "")
	if err != nil {
		return err
	}
	if !removed {
		return nip43.Leave("")
	}
	a.unlisted = true
	return a.publishMembership(ctx, kinds.RelayMemberRemoved, a.ev.PubKey)
}

// publishMembership signs delta (8000 or 8001, 0 none) for key, then the
// community's 13534 list as it now stands, replacing the previous one.
func (a *apply) publishMembership(ctx context.Context, delta int, key string) error {
	if delta != 0 {
		if _, err := a.sign(ctx, delta, a.now, nip43.DeltaTags(key), "", records.EventMeta{TopLevel: true}); err != nil {
			return err
		}
	}
	return a.replaceRelayEvent(ctx, kinds.RelayMembershipList, "", func() (nostr.Tags, error) {
		members, err := a.tx.RelayMembersList(ctx)
		if err != nil {
			return nil, err
		}
		return nip43.ListTags(members), nil
	})
}
