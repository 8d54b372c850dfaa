package relayinfo

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/testing/mdtable"
)

// The NIP-11 document shows the limits the handlers enforce, both filter
// limits included: max_filters for a WebSocket REQ or COUNT, and the
// extension field max_http_filters for POST /query and POST /count.
func TestDocumentAdvertisesLimits(t *testing.T) {
	lim := limitation(t)
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
		if got, ok := lim[k].(float64); !ok || got != v {
			t.Errorf("limitation.%s = %v, want %v", k, lim[k], v)
		}
	}
	if MaxMessageLength > 131072 {
		t.Errorf("max_message_length %d is over API Gateway's 128 KB", MaxMessageLength)
	}
}

// docs/reference.md's "## Limits" table gives, for every numeric NIP-11 limitation
// field, the value the document advertises, and names no field the document
// lacks.
func TestReferenceLimitsTable(t *testing.T) {
	header, rows, err := mdtable.Read("../../../docs/reference.md", "## Limits")
	if err != nil {
		t.Fatal(err)
	}
	if len(header) != 4 {
		t.Fatalf("docs/reference.md's limits table has %d columns, want 4 (limit, value, NIP-11 field, the client bursts it was sized against)", len(header))
	}
	lim := limitation(t)
	seen := map[string]bool{}
	for _, cells := range rows {
		if len(cells) != 4 {
			t.Errorf("docs/reference.md limits row %q has %d cells, want 4", cells, len(cells))
			continue
		}
		field := strings.Trim(cells[2], "`")
		if field == "" {
			continue
		}
		value, _, _ := strings.Cut(cells[1], " ")
		want, ok := lim[field].(float64)
		if !ok {
			t.Errorf("docs/reference.md names limitation.%s, which NIP-11 does not show as a number", field)
			continue
		}
		if got, err := strconv.ParseFloat(value, 64); err != nil || got != want {
			t.Errorf("docs/reference.md says %s is %q, NIP-11 says %v", field, cells[1], want)
		}
		seen[field] = true
	}
	for field, v := range lim {
		if _, num := v.(float64); num && !seen[field] {
			t.Errorf("docs/reference.md's limits table has no row for limitation.%s", field)
		}
	}
}

// limitation is the NIP-11 document's limitation object as JSON shows it.
func limitation(t *testing.T) map[string]any {
	t.Helper()
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
	return doc.Limitation
}

// Issue 28: NIP-11 advertises NIP-29 (and NIP-22 comments) for generic
// group clients.
func TestSupportedNIPsIncludeGroups(t *testing.T) {
	doc := New("ab")
	if doc.Self != "ab" {
		t.Errorf("self = %q", doc.Self)
	}
	for _, want := range []int{22, 29} {
		if !slices.Contains(doc.SupportedNIPs, want) {
			t.Errorf("supported_nips %v lacks %d", doc.SupportedNIPs, want)
		}
	}
}

// Issue 40: NIP-11 advertises NIP-40 (expired events refused, unserved and
// swept) and NIP-70 (protected events only from their author), which the
// relay serves (docs/protocol.md).
func TestSupportedNIPsListExpirationAndProtected(t *testing.T) {
	doc := New("ab")
	for _, want := range []int{40, 70} {
		if !slices.Contains(doc.SupportedNIPs, want) {
			t.Errorf("supported_nips %v lacks %d", doc.SupportedNIPs, want)
		}
	}
}

// The media block appears only when the relay serves media.
func TestMediaBlock(t *testing.T) {
	d := New("pk")
	b, _ := json.Marshal(d)
	if strings.Contains(string(b), `"media"`) {
		t.Fatalf("media block without media: %s", b)
	}
	d.Media = &Media{Endpoints: MediaEndpoints, MaxBlobBytes: 100, DirectUploadMaxBytes: 10}
	b, _ = json.Marshal(d)
	var got struct {
		Media struct {
			Endpoints    []string `json:"endpoints"`
			MaxBlobBytes int64    `json:"max_blob_bytes"`
		} `json:"media"`
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Media.MaxBlobBytes != 100 || len(got.Media.Endpoints) != len(MediaEndpoints) {
		t.Fatalf("media block: %s", b)
	}
}

// NIP-ER is advertised as its draft asks: "nip-er" in supported_extensions
// (never a number in supported_nips) and due_delivery_mode "lazy" (served
// on read, never pushed when due).
func TestAdvertisesNIPER(t *testing.T) {
	b, _ := json.Marshal(New("ab"))
	var doc struct {
		Extensions []string `json:"supported_extensions"`
		Limitation struct {
			DueDeliveryMode string `json:"due_delivery_mode"`
		} `json:"limitation"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(doc.Extensions, "nip-er") || doc.Limitation.DueDeliveryMode != "lazy" {
		t.Errorf("NIP-11: supported_extensions %v, due_delivery_mode %q", doc.Extensions, doc.Limitation.DueDeliveryMode)
	}
}
