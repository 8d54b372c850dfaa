package ddbsessions

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestSharedReadsNeverJoinARunningRead protects live delivery's promise
// under shared audience reads: a caller that arrives while a read of its
// key runs (a read that may have started before its commit) gets a read
// that starts after it, and the callers that arrive meanwhile share that
// one read.
func TestSharedReadsNeverJoinARunningRead(t *testing.T) {
	var r sharedReads
	ctx := context.Background()
	var reads atomic.Int32
	release := make(chan struct{}, 3)
	started := make(chan int32, 3)
	read := func(context.Context) ([]map[string]types.AttributeValue, error) {
		n := reads.Add(1)
		started <- n
		<-release
		return []map[string]types.AttributeValue{{"round": &types.AttributeValueMemberN{Value: string('0' + rune(n))}}}, nil
	}
	round := func(items []map[string]types.AttributeValue) string {
		return items[0]["round"].(*types.AttributeValueMemberN).Value
	}
	first := make(chan string, 1)
	go func() {
		items, err := r.do(ctx, "k", read)
		if err != nil {
			t.Error(err)
		}
		first <- round(items)
	}()
	if n := <-started; n != 1 {
		t.Fatalf("first read is read %d", n)
	}
	// Read 1 runs: these callers must not get it.
	var wg sync.WaitGroup
	later := make([]string, 3)
	for i := range later {
		wg.Go(func() {
			items, err := r.do(ctx, "k", read)
			if err != nil {
				t.Error(err)
				return
			}
			later[i] = round(items)
		})
	}
	waitFor(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.keys["k"] != nil && r.keys["k"].waiting != nil && r.keys["k"].waiting.callers == 3
	})
	release <- struct{}{}
	if got := <-first; got != "1" {
		t.Fatalf("first caller got read %s, want 1", got)
	}
	if n := <-started; n != 2 {
		t.Fatalf("second read is read %d", n)
	}
	release <- struct{}{}
	wg.Wait()
	for i, got := range later {
		if got != "2" {
			t.Errorf("caller %d, which came while read 1 ran, got read %s, want 2", i, got)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads for four callers, want 2", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) != 0 {
		t.Errorf("a key with no read left is kept: %v", r.keys)
	}
}

// TestSharedReadsKeysApart: reads of different keys (another channel's
// audience) are never shared.
func TestSharedReadsKeysApart(t *testing.T) {
	var r sharedReads
	var reads atomic.Int32
	read := func(context.Context) ([]map[string]types.AttributeValue, error) {
		reads.Add(1)
		return nil, nil
	}
	for _, k := range []string{"a", "b", "a"} {
		if _, err := r.do(context.Background(), k, read); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load(); n != 3 {
		t.Errorf("%d reads for three calls one after another, want 3", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not reached")
}
