package e2e

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// TestPushSenderCrashMidBatchLosesNoDeliveryAndDuplicatesNone: the push
// sender runs as its own binary; while it waits for the answer to the third
// of five callbacks of one event, the emulator kills its process. Lambda's
// retry (emulated) finishes the batch: every subscriber's callback is
// acknowledged exactly once (the cut request, never answered, is sent
// again), and no acknowledged one is sent twice.
func TestPushSenderCrashMidBatchLosesNoDeliveryAndDuplicatesNone(t *testing.T) {
	r := StartTest(t, Options{PushSenderProcesses: 1})
	cb := newCallbacks(t)
	var seen atomic.Int32
	held := make(chan struct{})
	cb.hold = func(req *http.Request, _ int) bool {
		if seen.Add(1) != 3 {
			return true
		}
		close(held)
		<-req.Context().Done() // the sender died: no answer reaches it
		return false
	}
	alice, arl := loggedIn(t, r)
	open := createChannel(t, arl, alice, "open")
	const subscribers = 5
	for i := range subscribers {
		u, rl := loggedIn(t, r)
		subscribe9a(t, r, rl, u, "crash", cb.url(fmt.Sprintf("/s%d", i)), true, `{"kinds":[9],"#h":["`+open+`"]}`)
	}
	m := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "one event, five callbacks")
	select {
	case <-held:
	case <-time.After(2 * wait):
		t.Fatal("the sender never reached the third callback")
	}
	if n := r.PushSender.Crash(); n != 1 {
		t.Fatalf("killed %d push sender processes, want 1", n)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		acked := 0
		for i := range subscribers {
			acked += len(cb.ids(fmt.Sprintf("/s%d", i)))
		}
		if acked >= subscribers || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.Lambda.Wait()
	total := 0
	for i := range subscribers {
		path := fmt.Sprintf("/s%d", i)
		got := cb.ids(path)
		if len(got) != 1 || got[0] != m.ID {
			t.Errorf("%s acknowledged %v, want exactly [%s]", path, got, m.ID)
		}
		total += cb.requested(path)
	}
	if total != subscribers+1 {
		t.Errorf("%d callback requests, want %d: each once, and the one cut by the crash again", total, subscribers+1)
	}
}
