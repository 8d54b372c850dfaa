package relayinfo

import (
	"encoding/json"
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
