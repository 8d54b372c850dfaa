package groupid

import (
	"strings"
	"testing"
)

func TestValidAndCanonical(t *testing.T) {
	for _, tc := range []struct {
		id        string
		valid     bool
		canonical string
	}{
		{"C0FFEE00-0000-4000-8000-000000000000", true, "c0ffee00-0000-4000-8000-000000000000"},
		{"c0ffee00-0000-4000-8000-000000000000", true, "c0ffee00-0000-4000-8000-000000000000"},
		{"MyGroup_1-a", true, "MyGroup_1-a"},
		{"ABCDEF", true, "ABCDEF"}, // hex but not a UUID: kept as sent
		{strings.Repeat("a", MaxLength), true, strings.Repeat("a", MaxLength)},
		{strings.Repeat("a", MaxLength+1), false, ""},
		{"", false, ""},
		{"with space", false, ""},
		{"slash/id", false, ""},
		{"dot.id", false, ""},
		{"ümlaut", false, ""},
	} {
		if got := Valid(tc.id); got != tc.valid {
			t.Errorf("Valid(%q) = %v, want %v", tc.id, got, tc.valid)
		}
		if tc.valid && Canonical(tc.id) != tc.canonical {
			t.Errorf("Canonical(%q) = %q, want %q", tc.id, Canonical(tc.id), tc.canonical)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip(strings.Repeat("x", 100)); got != strings.Repeat("x", 80)+"…" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip = %q", got)
	}
}
