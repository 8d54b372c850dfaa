package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Only an owner (an operator of the community) or an admin may create an
// invite: the rule lives in InvitesInsert's statement (the check and the
// insert in one), so a member's or a stranger's mint stores nothing.
func TestInvitesInsertOnlyOwnersAndAdmins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := freshStore(t)
	_, owner := keypair()
	_, admin := keypair()
	_, member := keypair()
	_, stranger := keypair()
	if _, err := store.PoolOf(st).Exec(ctx, `UPDATE communities SET operators = array_append(operators, $1) WHERE id = 'default'`, owner); err != nil {
		t.Fatal(err)
	}
	err := st.Tx(ctx, "default", func(tx *store.Tx) error {
		for pk, role := range map[string]string{admin: nip43.Admin, member: nip43.Member} {
			if _, err := tx.RelayMembersInsert(ctx, pk, role, owner, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	for name, c := range map[string]struct {
		pk string
		ok bool
	}{"owner": {owner, true}, "admin": {admin, true}, "member": {member, false}, "stranger": {stranger, false}} {
		code := "code-of-" + name
		ok, err := st.InvitesInsert(ctx, "default", invite.Hash(code), c.pk, now, now+3600, 0)
		if err != nil || ok != c.ok {
			t.Errorf("%s mints: %v %v, want %v", name, ok, err, c.ok)
		}
		var n int
		if err := store.PoolOf(st).QueryRow(ctx, `SELECT count(*) FROM invites WHERE code_hash = $1`, invite.Hash(code)).Scan(&n); err != nil || (n == 1) != c.ok {
			t.Errorf("%s's invite stored %d times (%v)", name, n, err)
		}
	}
}
