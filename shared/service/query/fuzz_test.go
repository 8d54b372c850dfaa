package query

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// wantInvalid fails unless err is nil or an invalid: rejection.
func wantInvalid(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if r, ok := reject.As(err); !ok || r.Prefix != reject.Invalid {
		t.Fatalf("error %v is not an invalid: rejection", err)
	}
}

// FuzzNostrFilter feeds arbitrary WebSocket REQ filter objects, decoded as
// go-nostr does, to the WebSocket side of the filter parser. Seeds:
// testdata/fuzz/FuzzNostrFilter.
func FuzzNostrFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		var nf nostr.Filter
		if err := json.Unmarshal(raw, &nf); err != nil {
			return
		}
		fl, err := fromNostr(nf)
		wantInvalid(t, err)
		if err != nil {
			return
		}
		checkBounds(t, fl)
		_, err = nostrRequest([]nostr.Filter{nf})
		wantInvalid(t, err)
	})
}

func checkBounds(t *testing.T, fl *bridgeFilter) {
	t.Helper()
	if len(fl.IDs) > maxValues || len(fl.Authors) > maxValues || len(fl.Kinds) > maxValues {
		t.Fatal("a list over maxValues accepted")
	}
	for name, vals := range fl.Tags {
		if len(vals) > maxValues {
			t.Fatalf("#%s over maxValues accepted", name)
		}
		for _, v := range vals {
			if strings.IndexByte(v, 0) >= 0 {
				t.Fatalf("#%s value with NUL accepted", name)
			}
		}
	}
	if len(fl.Search) > maxSearchBytes || len(strings.Fields(fl.Search)) > maxSearchTerms {
		t.Fatalf("search %q accepted", fl.Search)
	}
}
