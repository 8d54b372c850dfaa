package relayinfo

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The NIP-11 document shows the limits the handlers enforce, both filter
// limits included: max_filters for a WebSocket REQ or COUNT, and the
// extension field max_http_filters for POST /query and POST /count.
func TestDocumentAdvertisesLimits(t *testing.T) {
	b, err := json.Marshal(New("ab"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Limitation map[string]any `json:"limitation"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"max_message_length":     MaxMessageLength,
		"max_subscriptions":      MaxSubscriptions,
		"max_filters":            MaxFilters,
		"max_http_filters":       MaxHTTPFilters,
		"max_limit":              MaxLimit,
		"default_limit":          DefaultLimit,
		"max_event_tags":         MaxEventTags,
		"max_content_length":     MaxContentLength,
		"max_subid_length":       MaxSubIDLength,
		"created_at_lower_limit": CreatedAtWindow,
		"created_at_upper_limit": CreatedAtWindow,
	}
	for k, v := range want {
		if got, ok := doc.Limitation[k].(float64); !ok || got != v {
			t.Errorf("limitation.%s = %v, want %v", k, doc.Limitation[k], v)
		}
	}
	if MaxMessageLength > 131072 {
		t.Errorf("max_message_length %d is over API Gateway's 128 KB", MaxMessageLength)
	}
}

// README.md's "## Limits" table gives, for every numeric NIP-11 limitation
// field, the value the document advertises, and names no field the document
// lacks.
func TestReadmeLimitsTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Limits\n")
	if !ok {
		t.Fatal(`README.md has no "## Limits" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	doc, err := json.Marshal(New("ab"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Limitation map[string]any `json:"limitation"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) != 3 {
			continue
		}
		field := strings.Trim(strings.TrimSpace(cells[2]), "`")
		if field == "" || strings.HasPrefix(field, "---") || strings.HasPrefix(field, "NIP-11") {
			continue
		}
		value, _, _ := strings.Cut(strings.TrimSpace(cells[1]), " ")
		want, ok := d.Limitation[field].(float64)
		if !ok {
			t.Errorf("README.md names limitation.%s, which NIP-11 does not show as a number", field)
			continue
		}
		if got, err := strconv.ParseFloat(value, 64); err != nil || got != want {
			t.Errorf("README.md says %s is %q, NIP-11 says %v", field, cells[1], want)
		}
		seen[field] = true
	}
	for field, v := range d.Limitation {
		if _, num := v.(float64); num && !seen[field] {
			t.Errorf("README.md's limits table has no row for limitation.%s", field)
		}
	}
}
