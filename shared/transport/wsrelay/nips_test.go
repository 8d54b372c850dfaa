package wsrelay

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// TestSupportedNIPsListEveryVerbServed holds NIP-11's supported_nips to
// the codec: every verb of VerbNIPs is parsed (never "unknown verb"), its
// NIP is listed, and a verb outside the table is unknown.
func TestSupportedNIPsListEveryVerbServed(t *testing.T) {
	listed := relayinfo.New("").SupportedNIPs
	for verb, nip := range VerbNIPs {
		_, err := Parse([]byte(`["` + verb + `"]`))
		var pe *ParseError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Reason, "unknown verb") {
			t.Errorf("%s is in VerbNIPs but not parsed: %v", verb, err)
		}
		if !slices.Contains(listed, nip) {
			t.Errorf("%s is served (NIP-%d) but supported_nips %v lacks %d", verb, nip, listed, nip)
		}
	}
	_, err := Parse([]byte(`["NEG-ERR", "x", "y"]`))
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Err.Reason, "unknown verb") {
		t.Errorf("a verb the relay only sends was parsed: %v", err)
	}
}
