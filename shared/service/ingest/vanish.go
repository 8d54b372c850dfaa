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
// (store.Tx.KeyDataDelete) and the operators' audit log gets a row. The OK
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
	summary := fmt.Sprintf("%d events, %d blobs and %d staged uploads of this key deleted from this community", v.Events, len(v.Blobs), len(v.Uploads))
	if _, err := a.tx.ModerationActionsInsert(ctx, records.ModerationAction{EventID: a.ev.ID, Actor: a.ev.PubKey, Kind: a.ev.Kind,
		Target: a.ev.PubKey, Reason: "request to vanish (NIP-62): " + summary, CreatedAt: a.now}); err != nil {
		return err
	}
	a.note = "vanished: " + summary + " (NIP-62); this request stays as the tombstone"
	a.vanished = &v
	return nil
}
