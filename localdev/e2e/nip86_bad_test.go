package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// NIP-86 bad input, from the operator and from a stranger: every answer is
// a 4xx with a NIP-01 prefixed error, never a 5xx, and nothing changes.
func TestNIP86BadInput(t *testing.T) {
	r := newRelay(t)
	ctx := ctxT(t)
	op, stranger := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	a := onHost(t, r, "a.test")
	bodies := []string{
		``, `null`, `[]`, `"x"`, `{`, `{"method":1}`, `{"method":"nosuch","params":[]}`,
		`{"method":"banpubkey"}`, `{"method":"banpubkey","params":"x"}`, `{"method":"banpubkey","params":[1]}`,
		`{"method":"banpubkey","params":["zz"]}`, `{"method":"banpubkey","params":[{"a":1}]}`,
		`{"method":"banevent","params":["` + strings.Repeat("f", 63) + `"]}`,
		`{"method":"changerelayname","params":[]}`, `{"method":"changerelayname","params":[["x"]]}`,
		`{"method":"changerelayname","params":["` + strings.Repeat("n", 100_000) + `"]}`,
		`{"method":"changerelayicon","params":["javascript:alert(1)"]}`,
		`{"method":"addcommunity","params":[]}`, `{"method":"addcommunity","params":[{"id":""}]}`,
		`{"method":"disablecommunity","params":["nosuch"]}`, `{"method":"disablecommunity","params":["default"]}`,
		`{"method":"allowpubkey","params":["` + strings.Repeat("A", 64) + `", 7]}`,
	}
	for _, u := range []user{op, stranger} {
		for _, body := range bodies {
			st, out := a.do(&u, http.MethodPost, "/", "application/nostr+json+rpc", "", []byte(body))
			if st >= 500 {
				t.Errorf("%.80s: %d %s", body, st, out)
				continue
			}
			if st == http.StatusOK {
				var m struct{ Error string }
				_ = json.Unmarshal(out, &m)
				if m.Error == "" && u == stranger {
					t.Errorf("stranger %.80s: accepted %s", body, out)
				}
			}
		}
	}
	// The community is still served, under its name, and nobody is banned.
	if st, d := a.info(); st != http.StatusOK || d.Self != r.App.Signer.PublicKey() {
		t.Fatalf("after the bad calls: %d %+v", st, d)
	}
	if st, m := a.rpc(op, "listbannedpubkeys"); st != http.StatusOK || len(m["result"].([]any)) != 0 {
		t.Fatalf("listbannedpubkeys: %d %v", st, m)
	}
}
