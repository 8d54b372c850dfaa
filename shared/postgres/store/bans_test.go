package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// The ban check travels with the transaction's next statement, yet its
// refusal comes first whatever happens after it: a statement that finds
// something, a rule that refuses before any statement, a transaction with
// no statement at all, a multi-row query, a commit sent with an insert.
// Nothing is written for a banned key.
func TestCheckBansComesFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := freshStore(t)
	banned, bannedPK := keypair()
	free, _ := keypair()
	if _, err := store.PoolOf(st).Exec(ctx, `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, created_at) VALUES ('default', $1, 'ban', 0)`, bannedPK); err != nil {
		t.Fatal(err)
	}
	errRule := reject.Invalidf("a rule refused it")
	steps := map[string]func(*store.Tx, *nostr.Event) error{
		"nothing after it":                    func(*store.Tx, *nostr.Event) error { return nil },
		"a rule refuses before any statement": func(*store.Tx, *nostr.Event) error { return errRule },
		"a one-row read": func(tx *store.Tx, ev *nostr.Event) error {
			_, err := tx.EventsExists(ctx, ev.ID)
			return err
		},
		"a multi-row query": func(tx *store.Tx, ev *nostr.Event) error {
			_, err := tx.EventsListAddress(ctx, 0, ev.PubKey, "")
			return err
		},
		"an insert sent with COMMIT": func(tx *store.Tx, ev *nostr.Event) error {
			_, err := tx.EventsInsert(ctx, ev, records.EventMeta{TopLevel: true, Last: true})
			return err
		},
		"an insert, then commit": func(tx *store.Tx, ev *nostr.Event) error {
			_, err := tx.EventsInsert(ctx, ev, records.EventMeta{TopLevel: true})
			return err
		},
	}
	for name, step := range steps {
		t.Run(name, func(t *testing.T) {
			for _, sk := range []string{banned, free} {
				ev := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: name + " " + sk[:6]}
				if err := ev.Sign(sk); err != nil {
					t.Fatal(err)
				}
				err := st.Tx(ctx, "default", func(tx *store.Tx) error {
					if err := tx.BansCheck(ctx, ev, ev.PubKey); err != nil {
						return err
					}
					return step(tx, ev)
				})
				var stored bool
				if qerr := store.PoolOf(st).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1)`, ev.ID).Scan(&stored); qerr != nil {
					t.Fatal(qerr)
				}
				if sk == banned {
					if r, ok := reject.As(err); !ok || r.Prefix != reject.Blocked || !strings.Contains(r.Error(), "banned") {
						t.Fatalf("banned key: err %v, want blocked:", err)
					}
					if stored {
						t.Fatal("a banned key's event was stored")
					}
					continue
				}
				switch {
				case name == "a rule refuses before any statement":
					if !errors.Is(err, errRule) {
						t.Fatalf("free key: err %v, want the rule's refusal", err)
					}
				case err != nil:
					t.Fatalf("free key: %v", err)
				case strings.HasPrefix(name, "an insert") && !stored:
					t.Fatal("free key: the event was not stored")
				}
			}
		})
	}
}

// TestBannedNowAndTimedOutNowOneCaseTable holds the one predicate each of
// "banned now" and "timed out now" to one table of rules and expiries, on
// every door that asks: the write path's BansCheck and the door guard's
// Standing (media, NIP-86). An expired ban no longer bans (it still did
// for media), a timeout in force refuses (it did not for media), an
// expired one does not.
func TestBannedNowAndTimedOutNowOneCaseTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := freshStore(t)
	now := time.Now().Unix()
	past, future := now-60, now+3600
	for _, tc := range []struct {
		name             string
		rule             string // "" no row
		expires          *int64
		banned, timedOut bool
	}{
		{"no rule", "", nil, false, false},
		{"allowed", "allow", nil, false, false},
		{"banned for good", "ban", nil, true, false},
		{"banned until later", "ban", &future, true, false},
		{"a ban that expired", "ban", &past, false, false},
		{"timed out until later", "timeout", &future, false, true},
		{"a timeout that expired", "timeout", &past, false, false},
		{"a timeout without an expiry", "timeout", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk, pk := keypair()
			if tc.rule != "" {
				if _, err := store.PoolOf(st).Exec(ctx, `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, created_at, expires_at)
VALUES ('default', $1, $2, 0, $3)`, pk, tc.rule, tc.expires); err != nil {
					t.Fatal(err)
				}
			}
			s, err := st.PubkeyRulesGetStanding(ctx, "default", pk)
			if err != nil {
				t.Fatal(err)
			}
			if s.Banned != tc.banned || s.TimedOut != tc.timedOut {
				t.Errorf("Standing: banned %v timed out %v, want %v %v", s.Banned, s.TimedOut, tc.banned, tc.timedOut)
			}
			ev := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: tc.name}
			if err := ev.Sign(sk); err != nil {
				t.Fatal(err)
			}
			err = st.Tx(ctx, "default", func(tx *store.Tx) error {
				if err := tx.BansCheck(ctx, ev, ev.PubKey); err != nil {
					return err
				}
				_, err := tx.EventsExists(ctx, ev.ID)
				return err
			})
			var want error
			switch {
			case tc.banned:
				want = records.ErrBanned
			case tc.timedOut:
				want = records.ErrTimedOut
			}
			if !errors.Is(err, want) && (want != nil || err != nil) {
				t.Errorf("BansCheck: %v, want %v", err, want)
			}
		})
	}
}
