package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDeliverBatchRefusesBadParts: a part that names no share of an
// audience is refused before any read, and not worth a retry.
func TestDeliverBatchRefusesBadParts(t *testing.T) {
	event := json.RawMessage(`{"id":"` + strings.Repeat("0", 64) + `","pubkey":"` + strings.Repeat("0", 64) + `","created_at":1,"kind":9,"tags":[],"content":"","sig":"` + strings.Repeat("0", 128) + `"}`)
	f := &Fanout{} // no registry: a refused batch reads nothing
	for name, p := range map[string]Part{
		"index past the parts":    {Index: 3, Of: 3},
		"no parts":                {Index: 0, Of: 0},
		"range without an end":    {Of: 1, Ranged: true, After: "a"},
		"empty range":             {Of: 1, Ranged: true, After: "b", Through: "b"},
		"reversed range":          {Of: 1, Ranged: true, After: "c", Through: "b"},
		"a range that also split": {Of: 1, Ranged: true, Through: "b", Split: true},
	} {
		payload, err := json.Marshal(Batch{Community: "c1", Items: []BatchItem{{Event: event}}, Part: &p})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.DeliverBatch(context.Background(), payload); !errors.Is(err, ErrBadBatch) {
			t.Errorf("%s: %v, want ErrBadBatch", name, err)
		}
	}
}
