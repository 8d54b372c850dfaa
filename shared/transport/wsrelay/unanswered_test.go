package wsrelay

import (
	"context"
	"errors"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// posts is a Sender that keeps what was posted.
type posts []string

func (p *posts) Post(_ context.Context, _ string, data []byte) error {
	*p = append(*p, string(data))
	return nil
}

// TestFail: wsrelay's one error table, from an error and the message it
// answers to the frame posted: OK false for EVENT and AUTH, CLOSED for REQ
// and COUNT, NOTICE for what cannot be matched; the text is reject.Map's.
func TestFail(t *testing.T) {
	id := "aa"
	for _, tc := range []struct {
		name string
		to   target
		err  error
		want string
	}{
		{"event refused", target{verb: VerbEvent, event: id, matched: true}, reject.Restrictedf("no"), `["OK","aa",false,"restricted: no"]`},
		{"auth refused", target{verb: VerbAuth, event: id, matched: true}, reject.Invalidf("bad"), `["OK","aa",false,"invalid: bad"]`},
		{"req refused", target{verb: VerbReq, sub: "s", matched: true}, reject.New(reject.AuthRequired, "auth"), `["CLOSED","s","auth-required: auth"]`},
		{"count failed", target{verb: VerbCount, sub: "s", matched: true}, errors.New("secret"), `["CLOSED","s","` + reject.Opaque + `"]`},
		{"close failed", target{verb: VerbClose, sub: "s", matched: true}, reject.New(reject.RateLimited, "slow"), `["NOTICE","rate-limited: slow"]`},
		{"unmatched event", target{verb: VerbEvent}, reject.Invalidf("x"), `["NOTICE","invalid: x"]`},
	} {
		var got posts
		p := &replier{r: &Relay{Sender: &got, Log: testkit.Quiet(), conns: newConnCache()}, conn: "c"}
		p.fail(context.Background(), "test", tc.to, tc.err)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: posted %q, want %s", tc.name, got, tc.want)
		}
	}
}

// TestParseErrorsAnswered: a malformed message is answered in the form
// the client can match to it, where it can be told.
func TestParseErrorsAnswered(t *testing.T) {
	for body, want := range map[string]string{
		`["REQ","s",1]`:      `["CLOSED","s","invalid: filter 0 must be a JSON object"]`,
		`["EVENT","x"]`:      `["NOTICE","invalid: EVENT needs an event object"]`,
		`{"not":"an array"}`: `["NOTICE","invalid: message must be a JSON array like [\"REQ\", ...]: a value has the wrong type"]`,
	} {
		var got posts
		p := &replier{r: &Relay{Sender: &got, Log: testkit.Quiet(), conns: newConnCache()}, conn: "c"}
		if msg := p.parse(context.Background(), []byte(body)); msg != nil || len(got) != 1 || got[0] != want {
			t.Errorf("%s: posted %q, want %s", body, got, want)
		}
	}
}
