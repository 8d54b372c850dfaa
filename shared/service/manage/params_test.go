package manage

import (
	"encoding/json"
	"strings"
	"testing"
)

func raw(ps ...string) params {
	out := make(params, len(ps))
	for i, p := range ps {
		out[i] = json.RawMessage(p)
	}
	return out
}

// TestReportPageBounds: listeventsneedingmoderation's [limit, after] are
// held to 1..MaxReportPage and a report id; anything else is invalid:.
func TestReportPageBounds(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, c := range []struct {
		p     params
		limit int
		after string
		bad   bool
	}{
		{raw(), ReportPage, "", false},
		{raw("null", "null"), ReportPage, "", false},
		{raw("1"), 1, "", false},
		{raw("500", `"`+id+`"`), MaxReportPage, id, false},
		{raw("0"), 0, "", true},
		{raw("501"), 0, "", true},
		{raw(`"10"`), 0, "", true},
		{raw("10", `"xyz"`), 0, "", true},
		{raw("10", `"`+strings.ToUpper(id)+`"`), 0, "", true},
	} {
		limit, after, err := reportPage(c.p)
		if (err != nil) != c.bad || (!c.bad && (limit != c.limit || after != c.after)) {
			t.Errorf("%s: %d %q %v", c.p, limit, after, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "invalid: ") {
			t.Errorf("%s: %v, want invalid:", c.p, err)
		}
	}
}

// TestParamsRefuseWrongShapes: a required string or boolean parameter that
// is missing, empty or of another type is invalid:, naming its position.
func TestParamsRefuseWrongShapes(t *testing.T) {
	for _, p := range []params{raw(), raw(`""`), raw("1"), raw("null"), raw(`{"a":1}`)} {
		if _, err := p.str(0, "pubkey"); err == nil || !strings.HasPrefix(err.Error(), "invalid: ") || !strings.Contains(err.Error(), "1") {
			t.Errorf("str(%s): %v", p, err)
		}
	}
	for _, p := range []params{raw(), raw(`"true"`), raw("1")} { // (null reads as false, as it did in nip86)
		if _, err := p.boolean(0, "on"); err == nil || !strings.HasPrefix(err.Error(), "invalid: ") {
			t.Errorf("boolean(%s): %v", p, err)
		}
	}
	if s, err := raw(`"k"`).str(0, "pubkey"); s != "k" || err != nil {
		t.Errorf("str: %q %v", s, err)
	}
	if on, err := raw("true").boolean(0, "on"); !on || err != nil {
		t.Errorf("boolean: %v %v", on, err)
	}
	if raw("1").opt(0) != "" || raw().opt(3) != "" || raw(`"x"`).opt(0) != "x" {
		t.Error("opt")
	}
}
