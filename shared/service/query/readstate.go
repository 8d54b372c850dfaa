package query

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// NIP-RS's full-state load as Buzz's bridge serves it on POST /query
// (crates/buzz-relay/src/api/bridge/read_state_snapshot.rs): a body whose
// filters carry read_state_snapshot must be exactly one filter
// {"kinds":[30078],"authors":[<the authenticated key>],"read_state_snapshot":1},
// and the answer is an object with every one of the key's 30078 events,
// complete, or a refusal: never a partial list.

// SnapshotField is the filter field that asks for a read-state snapshot.
const SnapshotField = "read_state_snapshot"

// ReadStateSnapshot is the answer to a read-state snapshot request.
type ReadStateSnapshot struct {
	Version    int               `json:"read_state_snapshot"`
	Complete   bool              `json:"complete"`
	Community  string            `json:"community_id"`
	Pubkey     string            `json:"pubkey"`
	SnapshotID string            `json:"snapshot_id"`
	Events     []json.RawMessage `json:"events"`
}

// errNotExact is the one refusal of a snapshot request of any other shape.
func errNotExact() error {
	return reject.Invalidf("%s requires one exact version-%d own-author kind-%d filter", SnapshotField, relayinfo.ReadStateSnapshotVersion, kinds.ReadState)
}

// WantsReadStateSnapshot reports whether a POST /query body asks for a
// read-state snapshot: some filter of it has the read_state_snapshot field.
// A body that is not a JSON array of objects does not (the ordinary parse
// refuses it).
func WantsReadStateSnapshot(body []byte) bool {
	var fs []map[string]json.RawMessage
	if json.Unmarshal(body, &fs) != nil {
		return false
	}
	for _, f := range fs {
		if _, ok := f[SnapshotField]; ok {
			return true
		}
	}
	return false
}

// exactSnapshotFilter checks body against the one filter reader may send.
func exactSnapshotFilter(body []byte, reader string) error {
	var fs []map[string]json.RawMessage
	if err := json.Unmarshal(body, &fs); err != nil || len(fs) != 1 || len(fs[0]) != 3 {
		return errNotExact()
	}
	f := fs[0]
	var ks []int
	var authors []string
	if json.Unmarshal(f["kinds"], &ks) != nil || !slices.Equal(ks, []int{kinds.ReadState}) ||
		json.Unmarshal(f["authors"], &authors) != nil || !slices.Equal(authors, []string{reader}) ||
		!bytes.Equal(bytes.TrimSpace(f[SnapshotField]), []byte("1")) {
		return errNotExact()
	}
	return nil
}

// ReadStateSnapshot answers a POST /query body that asks for a read-state
// snapshot (WantsReadStateSnapshot): the reader's every stored 30078 event
// in one database snapshot, or invalid: (400) for any other shape than the
// one exact filter, or a 413 invalid: when they pass
// relayinfo.ReadStateSnapshotMaxEvents or ReadStateSnapshotMaxBytes.
func (e *Engine) ReadStateSnapshot(ctx context.Context, community, reader string, body []byte) (*ReadStateSnapshot, error) {
	if err := exactSnapshotFilter(body, reader); err != nil {
		return nil, err
	}
	var rows []records.Row
	var over bool
	ctx = e.traced(ctx)
	err := e.st.Read(ctx, community, reader, func(s *store.Snapshot) error {
		var err error
		rows, over, err = s.OwnState(ctx, kinds.ReadState, relayinfo.ReadStateSnapshotMaxEvents, relayinfo.ReadStateSnapshotMaxBytes)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query: read-state snapshot of %s: %w", reader, err)
	}
	if over {
		return nil, reject.TooLargef("%s exceeds %d events or %d bytes; cannot prove complete", SnapshotField,
			relayinfo.ReadStateSnapshotMaxEvents, relayinfo.ReadStateSnapshotMaxBytes)
	}
	out := &ReadStateSnapshot{Version: relayinfo.ReadStateSnapshotVersion, Complete: true, Community: community,
		Pubkey: reader, Events: make([]json.RawMessage, len(rows))}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", community, reader)
	for i, r := range rows {
		out.Events[i] = json.RawMessage(r.Raw)
		fmt.Fprintf(h, "%s\n", r.ID)
	}
	out.SnapshotID = hex.EncodeToString(h.Sum(nil))
	return out, nil
}
