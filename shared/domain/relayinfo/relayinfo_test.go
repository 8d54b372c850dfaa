package relayinfo

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip11"

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

// flotillaCanPush is Flotilla's getPushStuff condition on a NIP-11
// document as JSON parses it (src/app/util/push.ts canPush):
// relay.self is set and supported_nips.map(String).includes("9a").
func flotillaCanPush(t *testing.T, b []byte) bool {
	t.Helper()
	var doc struct {
		Self string `json:"self"`
		NIPs []any  `json:"supported_nips"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc.NIPs {
		if s, ok := n.(string); ok && s == "9a" {
			return doc.Self != ""
		}
	}
	return false
}

// Where push subscriptions are served, supported_nips lists "9a" as a
// string after the integers, which stay JSON numbers; without them it is
// absent; listed once however often it is advertised; and the document
// reads back into Document and into go-nostr's nip11 shape ([]any).
func TestSupportedNIPsList9aWherePushIsServed(t *testing.T) {
	d := New("ab")
	b, _ := json.Marshal(d)
	if flotillaCanPush(t, b) || strings.Contains(string(b), `"9a"`) {
		t.Fatalf("9a listed without push: %s", b)
	}
	d.AdvertisePush(false, nil)
	if b, _ = json.Marshal(d); flotillaCanPush(t, b) {
		t.Fatalf("9a listed with subscriptions off: %s", b)
	}
	d.AdvertisePush(true, nil)
	d.AdvertisePush(true, nil)
	b, _ = json.Marshal(d)
	if !flotillaCanPush(t, b) {
		t.Fatalf("Flotilla finds no push in %s", b)
	}
	var raw struct {
		NIPs []json.RawMessage `json:"supported_nips"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var names int
	for i, n := range raw.NIPs {
		if string(n) == `"9a"` {
			names++
			if i != len(raw.NIPs)-1 {
				t.Errorf("9a is not after the integers: %s", b)
			}
			continue
		}
		if _, err := strconv.Atoi(string(n)); err != nil {
			t.Errorf("supported_nips element %s is neither an integer nor 9a", n)
		}
	}
	if names != 1 || len(raw.NIPs) != len(d.SupportedNIPs)+1 {
		t.Errorf("supported_nips %s: want the %d integers and 9a once", b, len(d.SupportedNIPs))
	}
	var back Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.SupportedNIPs, d.SupportedNIPs) || !slices.Equal(back.SupportedNIPNames, []string{"9a"}) || back.Self != "ab" {
		t.Errorf("read back: %v %v %q", back.SupportedNIPs, back.SupportedNIPNames, back.Self)
	}
	var gn nip11.RelayInformationDocument
	if err := json.Unmarshal(b, &gn); err != nil || !slices.Contains(gn.SupportedNIPs, any("9a")) || !slices.Contains(gn.SupportedNIPs, any(float64(29))) {
		t.Errorf("go-nostr's nip11 reads %v (%v)", gn.SupportedNIPs, err)
	}
	var bad Document
	if err := json.Unmarshal([]byte(`{"supported_nips":[1,{"x":1}]}`), &bad); err == nil {
		t.Error("an object in supported_nips was read")
	}
}
