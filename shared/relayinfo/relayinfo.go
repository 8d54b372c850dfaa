// Package relayinfo is the NIP-11 document and the limits it advertises;
// the handlers enforce the same numbers.
package relayinfo

// Limits advertised in NIP-11 and enforced by the handlers.
const (
	MaxMessageLength  = 131072 // API Gateway WebSocket message limit (128 KB)
	MaxSubscriptions  = 20
	MaxFilters        = 10
	MaxLimit          = 1000
	DefaultLimit      = 1000
	MaxEventTags      = 2000
	MaxContentLength  = 262144
	CreatedAtWindow   = 900
	WindowMaxLimit    = 200
	ThreadMaxLimit    = 500
	MaxHTTPBodyLength = 1 << 20
	// MaxHTTPResponseLength bounds the events of one POST /query answer:
	// Lambda's 6 MB synchronous response limit, less room for the JSON
	// array, headers and the API Gateway envelope. A bigger answer is
	// refused with invalid: (README.md, docs/security.md).
	MaxHTTPResponseLength = 5_500_000
)

// Software and Version name this relay.
const (
	Software = "buzz-serverless-relay"
	Version  = "0.1.0"
)

// Document is the NIP-11 relay information document.
type Document struct {
	Name          string     `json:"name"`
	Description   string     `json:"description"`
	Icon          string     `json:"icon,omitempty"`
	Pubkey        string     `json:"pubkey"`
	Self          string     `json:"self"`
	SupportedNIPs []int      `json:"supported_nips"`
	Software      string     `json:"software"`
	Version       string     `json:"version"`
	Limitation    Limitation `json:"limitation"`
	// RateLimits are the per-key and per-connection limits (not a NIP-11
	// field; 0 = none); absent when the relay applies none.
	RateLimits *RateLimits `json:"rate_limits,omitempty"`
}

// RateLimits is shared/ratelimit's Limits as NIP-11 shows them.
type RateLimits struct {
	EventsPerMinute     int64 `json:"events_per_minute"`
	EventBytesPerMinute int64 `json:"event_bytes_per_minute"`
	ChannelsPerHour     int64 `json:"new_channels_per_hour"`
	ReadsPerMinute      int64 `json:"reads_per_minute"`
	WSMessagesPerMinute int64 `json:"websocket_messages_per_minute"`
}

// Limitation is NIP-11's limitation object.
type Limitation struct {
	MaxMessageLength    int   `json:"max_message_length"`
	MaxSubscriptions    int   `json:"max_subscriptions"`
	MaxFilters          int   `json:"max_filters"`
	MaxLimit            int   `json:"max_limit"`
	DefaultLimit        int   `json:"default_limit"`
	MaxEventTags        int   `json:"max_event_tags"`
	MaxContentLength    int   `json:"max_content_length"`
	AuthRequired        bool  `json:"auth_required"`
	RestrictedWrites    bool  `json:"restricted_writes"`
	CreatedAtLowerLimit int64 `json:"created_at_lower_limit"`
	CreatedAtUpperLimit int64 `json:"created_at_upper_limit"`
	PaymentRequired     bool  `json:"payment_required"`
	MaxSubidLength      int   `json:"max_subid_length"`
}

// New describes the relay whose key is relayPubkey.
func New(relayPubkey string) Document {
	return Document{
		Name:          "Buzz relay",
		Description:   "Serverless NIP-29 group relay with Buzz's HTTP bridge and channel window",
		Pubkey:        relayPubkey,
		Self:          relayPubkey,
		SupportedNIPs: []int{1, 9, 10, 11, 29, 42, 45, 50, 98},
		Software:      Software,
		Version:       Version,
		Limitation: Limitation{
			MaxMessageLength:    MaxMessageLength,
			MaxSubscriptions:    MaxSubscriptions,
			MaxFilters:          MaxFilters,
			MaxLimit:            MaxLimit,
			DefaultLimit:        DefaultLimit,
			MaxEventTags:        MaxEventTags,
			MaxContentLength:    MaxContentLength,
			AuthRequired:        true,
			RestrictedWrites:    true,
			CreatedAtLowerLimit: CreatedAtWindow,
			CreatedAtUpperLimit: CreatedAtWindow,
			MaxSubidLength:      64,
		},
	}
}

// Describe sets the community's own name, description and icon; empty
// values keep the relay's defaults.
func (d *Document) Describe(name, about, icon string) {
	if name != "" {
		d.Name = name
	}
	if about != "" {
		d.Description = about
	}
	d.Icon = icon
}
