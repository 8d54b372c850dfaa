package query

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-ER: a read of only another key's reminders is refused with
// restricted: on every path (REQ, COUNT, /query, /count), whether or not
// any exists; mixed with the reader's own key, only the reader's come back.
func TestOthersRemindersRefused(t *testing.T) {
	e := newEnv(t)
	alice, bob := newUser(), newUser()
	mine := e.submit(alice, 30300, t0, "ciphertext", nostr.Tag{"d", "r1"}, nostr.Tag{"not_before", "1790009999"})
	e.submit(bob, 30300, t0, "ciphertext", nostr.Tag{"d", "r2"})
	for _, author := range []string{bob.pk, strings.Repeat("c", 64)} { // one that has reminders, one that has none
		f := nostr.Filter{Kinds: []int{30300}, Authors: []string{author}}
		body := `[{"kinds":[30300],"authors":["` + author + `"]}]`
		_, reqErr := e.q.Req(e.ctx, "default", alice.pk, []nostr.Filter{f})
		_, countErr := e.q.CountFilters(e.ctx, "default", alice.pk, []nostr.Filter{f})
		_, queryErr := e.q.Query(e.ctx, "default", testHost, alice.pk, []byte(body))
		_, httpCountErr := e.q.Count(e.ctx, "default", alice.pk, []byte(body))
		for path, err := range map[string]error{"REQ": reqErr, "COUNT": countErr, "/query": queryErr, "/count": httpCountErr} {
			if r, ok := reject.As(err); !ok || r.Prefix != reject.Restricted {
				t.Errorf("%s of %.8s's reminders: %v, want restricted:", path, author, err)
			}
		}
	}
	both := e.query(alice, `[{"kinds":[30300],"authors":["`+alice.pk+`","`+bob.pk+`"]}]`)
	if len(both) != 1 || both[0].ID != mine.ID {
		t.Errorf("own and bob's reminders: %d events, want alice's only", len(both))
	}
	if n := e.count(alice, `[{"kinds":[30300]}]`); n != 1 {
		t.Errorf("kinds [30300] counts %d, want alice's one", n)
	}
}
