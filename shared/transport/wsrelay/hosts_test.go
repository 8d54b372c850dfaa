package wsrelay

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

type recorded struct {
	mu    sync.Mutex
	posts []string
}

func (r *recorded) Post(_ context.Context, _ string, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts = append(r.posts, string(data))
	return nil
}

// TestHostsResolveANewConnectionBeforeCommunity: with Hosts set (the
// directory), a new connection's first message resolves its host there
// only: Community (the database) is not asked, and a host Hosts refuses
// (a disabled community) gets its refusal from that first message.
func TestHostsResolveANewConnectionBeforeCommunity(t *testing.T) {
	r := New(sessions.NewRegistry(sessionstest.DynamoDB(t).Store), nil, &recorded{}, func(context.Context, string) (string, error) {
		t.Fatal("Community (the database) asked")
		return "", nil
	}, testkit.Quiet())
	asked := 0
	r.Hosts = func(_ context.Context, host string) (string, error) {
		asked++
		if host != "b.example" {
			t.Errorf("Hosts asked for %q", host)
		}
		return "", reject.Restrictedf("no community is served at host %q", host)
	}
	out := r.Sender.(*recorded)
	r.Message(context.Background(), Request{ConnectionID: "c1=", Host: "b.example", Scheme: "ws", Body: []byte(`["REQ","s",{"kinds":[9]}]`)})
	if asked != 1 {
		t.Fatalf("Hosts asked %d times, want 1", asked)
	}
	if len(out.posts) != 1 || !strings.HasPrefix(out.posts[0], `["CLOSED","s","restricted: no community is served at host`) {
		t.Fatalf("posts %q, want the CLOSED refusal", out.posts)
	}
}
