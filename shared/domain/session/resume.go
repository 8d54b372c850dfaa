package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Resume is what a live subscription's answer leaves behind for its replay
// after a reconnect (Buzz desktop replays each live subscription with since
// = last seen - 5 s, welshman re-sends its REQ unchanged; API Gateway closes
// every socket after 2 hours): the key that asked, the subscription id,
// the shape of its filters, and the community's last-write stamp as of the
// answer. A later REQ that Covers allows is answered EOSE (then live) from
// the session store, without the database. The one rule is Covers.
type Resume struct {
	Community, Pubkey, Sub string
	// Shape is the filters' digest without since and limit (ShapeOf).
	Shape string
	// Since and Limit are each filter's since and limit as answered, -1
	// when absent.
	Since, Limit []int64
	// Wrote is the community's last-write stamp (Mark.Wrote) read before
	// the answer's read, and At the clock (unix s) just before that read.
	Wrote, At int64
	// Newest is the highest created_at among the events the answer sent
	// (0: it sent none).
	Newest int64
	// ExpiresAt is when the record stops counting (ResumeFor after the
	// last answer it covered).
	ExpiresAt int64
}

// Mark is a community's state in the session store: its last-commit mark
// (the highest created_at stored: Value, when Exists) and its last-write
// stamp (Wrote: a second at or after the start of the latest write, 0 when
// none was stamped).
type Mark struct {
	Value  int64
	Exists bool
	Wrote  int64
}

// ResumeSettle bounds, in seconds, both how long a write may run between
// stamping the community and committing (every function that writes has a
// Lambda timeout below it: shared/wiring/lambdas) and how long an answer
// is given to reach the client before a replay may rely on it. A record is
// only ever made when the community's stamp was at least this old at the
// answer (so every write it covers had committed before the answer's read)
// and only covers a REQ at least this long after the answer.
const ResumeSettle = 60

// ResumeFor is how long a record lasts after the last answer it covered:
// past one API Gateway connection lifetime (2 h), so an always-open client
// resumes at each forced reconnect, and a little longer for the
// reconnect itself.
const ResumeFor = 2*time.Hour + 10*time.Minute

// ReplaySlack is how far below the newest event it has seen a replay may
// start: Buzz desktop replays with since = last seen - 5 s
// (relayReconnectReplay.ts).
const ReplaySlack = 5

// ShapeOf is the digest of filters with since and limit removed, and each
// filter's since and limit (-1: absent): a record's key and bounds.
func ShapeOf(filters []nostr.Filter) (shape string, since, limit []int64, err error) {
	bare := make([]nostr.Filter, len(filters))
	since, limit = make([]int64, len(filters)), make([]int64, len(filters))
	for i, f := range filters {
		since[i], limit[i] = -1, -1
		if f.Since != nil {
			since[i] = int64(*f.Since)
		}
		if f.Limit > 0 || f.LimitZero {
			limit[i] = int64(f.Limit)
		}
		f.Since, f.Limit, f.LimitZero = nil, 0, false
		bare[i] = f
	}
	raw, err := json.Marshal(bare)
	if err != nil {
		return "", nil, nil, fmt.Errorf("session: shape of filters: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), since, limit, nil
}

// NewResume is the record of an answer to pubkey's REQ sub of filters in
// community, given the community's stamp wrote read at at (the clock just
// before the read). ok is false when no record may be made: the community
// was written within ResumeSettle before the answer (a write stamped then
// may commit after the read, unseen), or the filters have no shape.
func NewResume(community, pubkey, sub string, filters []nostr.Filter, wrote, at, newest int64) (Resume, bool) {
	if wrote > at-ResumeSettle || len(filters) == 0 {
		return Resume{}, false
	}
	shape, since, limit, err := ShapeOf(filters)
	if err != nil {
		return Resume{}, false
	}
	return Resume{Community: community, Pubkey: pubkey, Sub: sub, Shape: shape, Since: since, Limit: limit,
		Wrote: wrote, At: at, Newest: newest, ExpiresAt: at + int64(ResumeFor/time.Second)}, true
}

// Covers reports whether r answers the REQ sub of pubkey with filters in
// community at now, given the community's mark m read after the REQ's
// subscription was stored: the same key, community and id; the same
// filters but for each since at or above the answered one and each limit
// at or below it (a subset of what was answered); the community written
// by nothing since the answer (m.Wrote unchanged: every write, an edit, a
// deletion or a membership change alike, stamps it first); the answer
// ResumeSettle old (time to have reached the client); r not expired; and,
// when the answer sent events, every filter saying what the client holds:
// a since at or above the newest event sent less ReplaySlack. An id alone
// says nothing of that: nostr-tools and go-nostr number their
// subscriptions from 1 on every connection, so a client started afresh
// asks again with the same id and filters and has nothing. Anything else
// goes to the database.
func (r *Resume) Covers(community, pubkey, sub string, filters []nostr.Filter, m Mark, now int64) bool {
	if r == nil || r.Community != community || r.Pubkey != pubkey || pubkey == "" || r.Sub != sub {
		return false
	}
	if now >= r.ExpiresAt || now < r.At+ResumeSettle || r.Wrote > r.At-ResumeSettle || m.Wrote != r.Wrote {
		return false
	}
	shape, since, limit, err := ShapeOf(filters)
	if err != nil || shape != r.Shape || len(since) != len(r.Since) || len(limit) != len(r.Limit) {
		return false
	}
	for i := range since {
		if r.Since[i] >= 0 && since[i] < r.Since[i] {
			return false // asks for older events than were answered
		}
		if r.Limit[i] >= 0 && (limit[i] < 0 || limit[i] > r.Limit[i]) {
			return false // asks for more events than were answered
		}
		if r.Newest > 0 && since[i] < r.Newest-ReplaySlack {
			return false // does not say it holds what was sent (no since, or an older one)
		}
	}
	return true
}
