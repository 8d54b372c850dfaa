package wsrelay

import (
	"context"
	"errors"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

type invokes [][]byte

func (i *invokes) InvokeAsync(_ context.Context, payload []byte) error {
	*i = append(*i, payload)
	return nil
}

// TestConnectHandsAcceptedConnectionsToTheGreeter: $connect hands an
// accepted connection to the push function (the greeting), and only an
// accepted one: a host that serves no community is refused, not greeted.
// A greeter that fails does not refuse the connection.
func TestConnectHandsAcceptedConnectionsToTheGreeter(t *testing.T) {
	var got invokes
	r := New(nil, nil, nil, nil, testkit.Quiet())
	r.Greeter = &got
	r.Admit = func(_ context.Context, host string) error {
		if host != "relay.example" {
			return reject.Restrictedf("no community at %s", host)
		}
		return nil
	}
	if err := r.Connect(context.Background(), Request{ConnectionID: "c1=", Host: "Relay.Example."}); err != nil {
		t.Fatal(err)
	}
	if err := r.Connect(context.Background(), Request{ConnectionID: "c2=", Host: "other.example"}); err == nil {
		t.Fatal("an unknown host was accepted")
	}
	if len(got) != 1 || string(got[0]) != string(wire.GreetEvent("c1=")) {
		t.Fatalf("greetings %q, want one for c1=", got)
	}
	r.Greeter = failing{}
	if err := r.Connect(context.Background(), Request{ConnectionID: "c3=", Host: "relay.example"}); err != nil {
		t.Fatalf("a failed hand-off refused the connection: %v", err)
	}
}

type failing struct{}

func (failing) InvokeAsync(context.Context, []byte) error { return errors.New("throttled") }

// TestAnAuthAnsweringTheChallengeNeedsNoChallengeInReply: the reply to a
// first message carries the challenge unless that message is an AUTH
// naming it (the client has it: it was pushed at connect).
func TestAnAuthAnsweringTheChallengeNeedsNoChallengeInReply(t *testing.T) {
	conn := &session.Connection{Challenge: "abc"}
	for _, c := range []struct {
		body string
		want bool
	}{
		{`["AUTH",{"kind":22242,"tags":[["challenge","abc"]]}]`, true},
		{`["AUTH",{"kind":22242,"tags":[["challenge","other"]]}]`, false},
		{`["AUTH",{"kind":22242,"tags":[]}]`, false},
		{`["REQ","s",{"kinds":[1]}]`, false},
		{`nonsense`, false},
	} {
		msg, _ := Parse([]byte(c.body))
		if got := answers(msg, conn); got != c.want {
			t.Errorf("%s: answers %v, want %v", c.body, got, c.want)
		}
	}
}
