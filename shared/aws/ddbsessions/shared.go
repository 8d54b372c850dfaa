package ddbsessions

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sharedReads lets concurrent callers of one read share it, without
// weakening what each is promised: every caller gets the result of a read
// that started after its call did, as a read of its own would be. Per
// key, at most one read runs and one waits to start; a caller joins the
// waiting one (or starts it when none runs), never the running one, which
// may have started before the caller's commit. Delivering many commits of
// a channel at once then costs about one audience Query per round trip of
// the store, not one per commit. The zero value is ready.
type sharedReads struct {
	mu   sync.Mutex
	keys map[string]*readKey
}

type readKey struct {
	running, waiting *readRound
}

// readRound is one read and its result, shared by the callers that joined
// it before it started.
type readRound struct {
	done    chan struct{}
	items   []map[string]types.AttributeValue
	err     error
	callers int // that joined it
}

// sharedReadTimeout bounds a shared read: it runs on behalf of several
// callers, so no one caller's context ends it.
const sharedReadTimeout = 30 * time.Second

// do returns the result of read run for key after this call began: a read
// of its own, or one it shares with the callers of key that came while
// another read of key ran. The items are shared: callers only read them.
func (r *sharedReads) do(ctx context.Context, key string, read func(context.Context) ([]map[string]types.AttributeValue, error)) ([]map[string]types.AttributeValue, error) {
	r.mu.Lock()
	if r.keys == nil {
		r.keys = map[string]*readKey{}
	}
	k := r.keys[key]
	if k == nil {
		k = &readKey{}
		r.keys[key] = k
	}
	round := k.waiting
	if round == nil {
		round = &readRound{done: make(chan struct{})}
		k.waiting = round
	}
	round.callers++
	if k.running == nil {
		r.start(ctx, key, k, read)
	}
	r.mu.Unlock()
	select {
	case <-round.done:
		return round.items, round.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start runs k's waiting round (r.mu held); when it ends, the round that
// waited meanwhile starts, and a key with none left is forgotten.
func (r *sharedReads) start(ctx context.Context, key string, k *readKey, read func(context.Context) ([]map[string]types.AttributeValue, error)) {
	round := k.waiting
	k.running, k.waiting = round, nil
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
	go func() {
		defer cancel()
		round.items, round.err = read(rctx)
		r.mu.Lock()
		k.running = nil
		if k.waiting != nil {
			r.start(ctx, key, k, read)
		} else {
			delete(r.keys, key)
		}
		r.mu.Unlock()
		close(round.done)
	}()
}
