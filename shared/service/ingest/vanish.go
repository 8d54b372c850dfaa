package ingest

import (
	"context"
	"fmt"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// vanish is NIP-62's request to vanish, already checked by nip62.Check
// (its author, this relay named): in this one transaction the request is
// stored (the tombstone BansCheck reads to refuse what it deleted coming
// back), everything else of its key in the community is deleted
// (store.Tx.KeyDataDelete), the key leaves the LiveKit rooms it was live
// in, each of whose group's 39004 is re-signed without it
// (publishLiveKitParticipants), and the operators' audit log gets a row. The OK
// says what went; the blob objects are the caller's to delete after the
// commit (Outcome.Vanished).
func (a *apply) vanish(ctx context.Context) error {
	if err := a.store(ctx, records.EventMeta{TopLevel: true}); err != nil {
		return err
	}
	v, err := a.tx.KeyDataDelete(ctx, a.ev.PubKey, a.ev.ID)
	if err != nil {
		return err
	}
	// The key leaves every LiveKit room's participants, and each room's
	// group gets its 39004 re-signed without it, in this transaction.
	rooms, err := a.tx.LiveKitParticipantsDeleteKey(ctx, a.ev.PubKey)
	if err != nil {
		return err
	}
	for _, group := range rooms {
		if err := a.publishLiveKitParticipants(ctx, group); err != nil {
			return err
		}
	}
	summary := fmt.Sprintf("%d events, %d blobs and %d staged uploads of this key deleted from this community", v.Events, len(v.Blobs), len(v.Uploads))
	if _, err := a.tx.ModerationActionsInsert(ctx, records.ModerationAction{EventID: a.ev.ID, Actor: a.ev.PubKey, Kind: a.ev.Kind,
		Target: a.ev.PubKey, Reason: "request to vanish (NIP-62): " + summary, CreatedAt: a.now}); err != nil {
		return err
	}
	a.note = "vanished: " + summary + " (NIP-62); this request stays as the tombstone"
	a.vanished = &v
	return nil
}
