package wire

import (
	"context"
	"testing"
	"time"
)

// Issue 51: the posts to one connection are paced (PostBurst at once,
// then PostRate a second), each connection on its own bucket.
func TestPacerPacesEachConnection(t *testing.T) {
	now := time.Unix(1000, 0)
	p := NewPacer(100, 3)
	p.now = func() time.Time { return now }
	for i := range 3 {
		if d := p.reserve("a"); d != 0 {
			t.Fatalf("post %d within the burst waits %v", i, d)
		}
	}
	if d := p.reserve("a"); d != 10*time.Millisecond {
		t.Fatalf("the post past the burst waits %v, want 10ms", d)
	}
	if d := p.reserve("a"); d != 20*time.Millisecond {
		t.Fatalf("the next waits %v, want 20ms (queued behind)", d)
	}
	// Past PaceMaxWait of debt a post goes at once, uncounted.
	deep := NewPacer(10, 1)
	deep.now = p.now
	for i := range int(PaceMaxWait.Seconds()*10) + 1 {
		if d := deep.reserve("a"); d > PaceMaxWait {
			t.Fatalf("post %d waits %v, past PaceMaxWait", i, d)
		}
	}
	if d := deep.reserve("a"); d != 0 {
		t.Fatalf("a post past the debt waits %v, want 0", d)
	}
	if d := p.reserve("b"); d != 0 {
		t.Fatalf("another connection waits %v", d)
	}
	now = now.Add(time.Second)
	if d := p.reserve("a"); d != 0 {
		t.Fatalf("after a second: %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.now = time.Now
	for range 10 {
		_ = p.Wait(context.Background(), "c")
	}
	if err := NewPacer(1, 1).Wait(ctx, "c"); err != nil {
		t.Fatalf("first post of a fresh bucket: %v", err)
	}
	slow := NewPacer(1, 1)
	_ = slow.Wait(ctx, "c")
	if err := slow.Wait(ctx, "c"); err == nil {
		t.Fatal("a cancelled wait returned no error")
	}
}
