package ingest

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
)

// pin is NIP-29's 9010: an owner or admin of the group (the role every
// moderation command of a group asks, requireAdmin) replaces its pin list
// with the 9010's ordered e/a tags. The 9010 is stored in the group and the
// group's relay-signed 39005 (d = the group id, filed in the group so that
// its read rule is the group's) re-signed, replacing the previous one, in
// the 9010's transaction.
func (a *apply) pin(ctx context.Context) error {
	_, pins, err := nip29.ParsePins(a.ev)
	if err != nil {
		return err
	}
	ch, role, err := a.moderated(ctx)
	if err != nil {
		return err
	}
	if err := requireAdmin(role, "pin events"); err != nil {
		return err
	}
	if err := a.storeInChannel(ctx, ch.ID); err != nil {
		return err
	}
	return a.replaceRelayEventIn(ctx, ch.ID, kinds.GroupPins, ch.ID, func() (nostr.Tags, error) {
		return nip29.PinsTags(ch.ID, pins), nil
	})
}
