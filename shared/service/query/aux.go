package query

import (
	"context"
	"encoding/json"

	"github.com/nbd-wtf/go-nostr"

	kindtable "github.com/buzzrelay/relay/shared/domain/kinds" // window_test.go has a kinds helper
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// auxKinds are the hop-1 closure kinds (reactions, deletions, edits);
// auxDeleteKinds the hop-2 ones (deletions).
var (
	auxKinds       = kindtable.AuxKinds()
	auxDeleteKinds = kindtable.DeletionKinds()
)

// auxClosure appends the two-hop closure of targets: hop 1 the reactions,
// deletions and edits (5, 7, 9005, 40003) that reference a target by e tag;
// hop 2 the deletions (5, 9005) that reference a hop-1 event, including
// hop-1 events that are themselves deleted (those are not sent, but their
// deletions are). Each hop is drained page by page past the DB clamp; every
// event goes out once and only when the reader may read it. named are the
// channels the request names (a window's or thread's own channel). Each hop
// stops at relayinfo.MaxAuxPerHop events (see drainAux).
func (e *Engine) auxClosure(ctx context.Context, s *store.Snapshot, targets, named []string, out *output) error {
	if len(targets) == 0 {
		return nil
	}
	hop1, err := e.drainAux(ctx, s, targets, auxKinds, named, true)
	if err != nil {
		return err
	}
	next := make([]string, 0, len(hop1))
	for _, ev := range hop1 {
		next = append(next, ev.ID)
		if !ev.Deleted {
			out.add(ev.ID, ev.Raw)
		}
	}
	if len(next) == 0 {
		return nil
	}
	hop2, err := e.drainAux(ctx, s, next, auxDeleteKinds, named, false)
	if err != nil {
		return err
	}
	for _, ev := range hop2 {
		out.add(ev.ID, ev.Raw)
	}
	return nil
}

// aimsAt reports whether an aux event's target is one of targets: a
// reaction's (or forum vote's) last e tag, an edit's first, any e tag of a
// deletion (5, 9005).
// An e tag that is not the target (a quoted private message, say) does not
// pull the event into another channel's closure.
func aimsAt(kind int, raw string, targets map[string]bool) bool {
	var ev struct {
		Tags nostr.Tags `json:"tags"`
	}
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		return false
	}
	for _, id := range nip29.Targets(kind, ev.Tags) {
		if targets[id] {
			return true
		}
	}
	return false
}

// drainAux reads the readable events of kinds in the named channels whose
// target is one of targets, newest first (created_at DESC, id ASC), a page
// of at most e.auxPage at a time, and stops at relayinfo.MaxAuxPerHop: a
// capped hop keeps the newest events. Each page asks the store for no more
// than the hop still has room for, so a hop reads about the cap's rows (plus
// the few whose e tag names a target without aiming at it), never the
// whole set.
func (e *Engine) drainAux(ctx context.Context, s *store.Snapshot, targets []string, kinds []int, named []string, withDeleted bool) ([]records.AuxRow, error) {
	set := make(map[string]bool, len(targets))
	for _, id := range targets {
		set[id] = true
	}
	var all []records.AuxRow
	read := &store.AuxRead{Targets: targets, Kinds: kinds, Channels: named, WithDeleted: withDeleted}
	for {
		read.Limit = min(e.auxPage, relayinfo.MaxAuxPerHop-len(all))
		page, err := s.Aux(ctx, read)
		if err != nil {
			return nil, err
		}
		for _, ev := range page {
			if aimsAt(ev.Kind, ev.Raw, set) {
				all = append(all, ev)
			}
		}
		if len(page) < read.Limit || len(all) >= relayinfo.MaxAuxPerHop {
			return all, nil
		}
		last := page[len(page)-1]
		read.After = &records.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}
