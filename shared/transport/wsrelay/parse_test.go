package wsrelay

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

func TestParse(t *testing.T) {
	ev := nostr.Event{Kind: 1, CreatedAt: 1, Content: "x"}
	_ = ev.Sign(nostr.GeneratePrivateKey())
	ok := []struct {
		msg, verb, sub string
		filters        int
	}{
		{`["REQ","s",{"kinds":[1],"#h":["c"],"top_level":true,"#hh":["x"]}]`, VerbReq, "s", 1},
		{`["COUNT","c",{},{"limit":0}]`, VerbCount, "c", 2},
		{`["CLOSE","s"]`, VerbClose, "s", 0},
		{`["EVENT",` + ev.String() + `]`, VerbEvent, "", 0},
		{`["AUTH",` + ev.String() + `]`, VerbAuth, "", 0},
	}
	for _, c := range ok {
		m, err := Parse([]byte(c.msg))
		if err != nil {
			t.Fatalf("%s: %v", c.msg, err)
		}
		if m.Verb != c.verb || m.SubID != c.sub || len(m.Filters) != c.filters {
			t.Fatalf("%s: got %+v", c.msg, m)
		}
	}
	m, _ := Parse([]byte(`["REQ","s",{"kinds":[1],"#h":["c"],"top_level":true,"#hh":["x"],"limit":0}]`))
	f := m.Filters[0]
	if _, bad := f.Tags["hh"]; bad || len(f.Tags["h"]) != 1 || !f.LimitZero {
		t.Fatalf("filter not cleaned: %+v", f)
	}
	// A REQ asking for a thread window keeps its filters as sent (the
	// extension); thread_window false or null, and COUNT, are plain reads.
	for msg, windows := range map[string]int{
		`["REQ","t",{"thread_window":true,"#h":["c"]},{"kinds":[1]}]`: 2,
		`["REQ","t",{"thread_window":"yes"}]`:                         1,
		`["REQ","t",{"thread_window":false,"kinds":[1]}]`:             0,
		`["REQ","t",{"thread_window":null}]`:                          0,
		`["COUNT","t",{"thread_window":true}]`:                        0,
	} {
		m, err := Parse([]byte(msg))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		if len(m.ThreadWindows) != windows || windows > 0 && m.Filters != nil {
			t.Errorf("%s: %d thread windows, %d filters", msg, len(m.ThreadWindows), len(m.Filters))
		}
	}
	bad := []struct{ msg, verb, sub, id string }{
		{`nope`, "", "", ""},
		{`["HELLO"]`, "", "", ""},
		{`["REQ","s"]`, VerbReq, "s", ""},
		{`["REQ","` + strings.Repeat("x", 65) + `",{}]`, VerbReq, "", ""},
		{`["EVENT",{"id":"` + ev.ID + `","kind":"one"}]`, VerbEvent, "", ev.ID},
		{`["EVENT",[]]`, VerbEvent, "", ""},
	}
	for _, c := range bad {
		_, err := Parse([]byte(c.msg))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %v is not a ParseError", c.msg, err)
		}
		if pe.Verb != c.verb || pe.SubID != c.sub || pe.EventID != c.id || !strings.HasPrefix(pe.Error(), "invalid: ") {
			t.Fatalf("%s: got %+v (%s)", c.msg, pe, pe.Error())
		}
	}
}

// The URL normalisation itself is tested in shared/domain/relayurl.
func TestRelayURLs(t *testing.T) {
	urls := RelayURLs("wss", "abc.execute-api.x", "prod")
	if len(urls) != 2 || urls[1] != "wss://abc.execute-api.x/prod" {
		t.Fatalf("RelayURLs = %v", urls)
	}
}

// FuzzParse: no client message makes the parser panic, and every refusal
// is a ParseError with a NIP-01 invalid: reason.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`["REQ","s",{"kinds":[1],"#h":["c"]}]`, `["EVENT",{"id":"x"}]`, `["AUTH",{}]`, `["CLOSE","s"]`,
		`["COUNT","c",{"limit":0,"since":-1}]`, `[]`, `{}`, `"x"`, `[1]`, `["REQ","s",{"#":["x"],"ids":null}]`,
		`["EVENT",{"tags":[[1]],"kind":1e99}]`, `["REQ","s",{"limit":1e30,"kinds":[-1]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Error(), "invalid: ") {
				t.Fatalf("error %v is not an invalid: ParseError", err)
			}
			if pe.Err.Reason == panicReason {
				t.Fatalf("a decoder panicked on %q", data)
			}
			return
		}
		if m.Verb == "" || (m.Verb == VerbEvent || m.Verb == VerbAuth) && m.Event == nil {
			t.Fatalf("parsed message %+v is incomplete", m)
		}
	})
}

// TestNegOpenTakesNDKSyncsOneFilterArray: NIP-77's NEG-OPEN carries one
// filter object; @nostr-dev-kit/sync 1.0.0 sends it as an array of that
// one filter, read as the same filter. An array of none or of two, or of
// something not a filter, is refused invalid: naming the subscription.
func TestNegOpenTakesNDKSyncsOneFilterArray(t *testing.T) {
	for msg, kinds := range map[string][]int{
		`["NEG-OPEN","n",{"kinds":[9],"#h":["c"]},"61"]`:   {9},
		`["NEG-OPEN","n",[{"kinds":[9],"#h":["c"]}],"61"]`: {9},
		`["NEG-OPEN","n", [ {"kinds":[7]} ] ,"61"]`:        {7},
	} {
		m, err := Parse([]byte(msg))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		if m.SubID != "n" || len(m.Filters) != 1 || !slices.Equal(m.Filters[0].Kinds, kinds) {
			t.Errorf("%s: got %+v", msg, m)
		}
	}
	for _, msg := range []string{
		`["NEG-OPEN","n",[],"61"]`,
		`["NEG-OPEN","n",[{"kinds":[9]},{"kinds":[1]}],"61"]`,
		`["NEG-OPEN","n",[1],"61"]`,
		`["NEG-OPEN","n",[[{}]],"61"]`,
		`["NEG-OPEN","n",[{"kinds":"x"}],"61"]`,
		`["NEG-OPEN","n",[{}],`,
	} {
		_, err := Parse([]byte(msg))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Error(), "invalid: ") {
			t.Errorf("%s: %v, want invalid:", msg, err)
			continue
		}
		if pe.SubID != "n" && msg != `["NEG-OPEN","n",[{}],` {
			t.Errorf("%s: refusal names subscription %q, want n", msg, pe.SubID)
		}
	}
}
