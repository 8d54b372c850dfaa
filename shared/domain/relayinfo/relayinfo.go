// Package relayinfo is the NIP-11 document and every limit the handlers
// enforce: the numbers live here once, the handlers read them from here, and
// New advertises the ones NIP-11 (or a documented extension field) can say.
// docs/reference.md ("Limits") and docs/security.md list them for people.
package relayinfo

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/buzzrelay/relay/shared/domain/push"
)

// Limits of one message or event.
const (
	MaxMessageLength = 131072 // API Gateway WebSocket message limit (128 KB)
	MaxEventTags     = 2000
	// MaxContentLength bounds an event's content (124 KiB): with its
	// tags, ids and signature it must fit MaxEventBytes.
	MaxContentLength = 126976
	// MaxEventBytes bounds a new event as JSON: the largest that one
	// WebSocket message can carry to every subscriber, as
	// ["EVENT","<subscription id of MaxSubIDLength>",<event>]. A larger
	// one is refused invalid: on every write path (shared/domain/eventcheck),
	// so every stored event stays deliverable over WebSocket.
	MaxEventBytes = MaxMessageLength - len(`["EVENT","",]`) - MaxSubIDLength
	// CreatedAtWindow is how far, in seconds, an event's created_at may be
	// from the relay's clock, either way.
	CreatedAtWindow = 900
	// GiftWrapMaxAge is how far back, in seconds, a gift wrap's created_at
	// may be: NIP-59 randomizes it up to two days back.
	GiftWrapMaxAge = 2*24*3600 + CreatedAtWindow
	// MaxHTTPBodyLength bounds a POST body.
	MaxHTTPBodyLength = 1 << 20
	// MaxHTTPResponseLength bounds the events of one POST /query answer:
	// Lambda's 6 MB synchronous response limit, less room for the JSON
	// array, headers and the API Gateway envelope. A bigger answer is
	// refused with invalid: (docs/reference.md, docs/security.md).
	MaxHTTPResponseLength = 5_500_000
)

// Limits of subscriptions and filters.
const (
	MaxSubscriptions = 20 // live subscriptions per WebSocket connection
	// MaxSubscriptionsPerKey bounds the live subscriptions one key holds
	// in a community across its connections (shared/service/sessions):
	// three connections at MaxSubscriptions each. It bounds the audience
	// one key adds to every delivery; beyond it a REQ is refused
	// rate-limited:.
	MaxSubscriptionsPerKey = 3 * MaxSubscriptions
	MaxSubIDLength         = 64
	// MaxFilters bounds the filters of one WebSocket REQ or COUNT (NIP-11
	// max_filters); MaxHTTPFilters those of one POST /query or /count
	// (advertised as limitation.max_http_filters, an extension field).
	MaxFilters     = 10
	MaxHTTPFilters = 10
	// MaxFilterValues bounds one filter list: ids, authors, kinds, or the
	// values of one tag.
	MaxFilterValues = 1000
	// MaxSearchBytes and MaxSearchTerms bound a NIP-50 search string.
	MaxSearchBytes = 256
	MaxSearchTerms = 8
	// MaxLimit is the clamp of a plain filter's limit, DefaultLimit its
	// value when the filter has none (NIP-11 max_limit, default_limit).
	MaxLimit     = 1000
	DefaultLimit = 1000
	// MaxREQEvents bounds the stored events one WebSocket REQ is answered
	// with across its filters (advertised as limitation.max_req_events,
	// an extension field): each filter's limit is lowered to its share of
	// it (shared/service/relay, ShareREQLimit). strfry caps each filter at
	// 500 (maxFilterLimit) and khatru's Postgres store at 100 per filter
	// (QueryLimit), neither across filters; here one filter keeps its
	// max_limit, and ten unbounded filters get 100 each, so one answer
	// stays under API Gateway's outbound buffer of a client that reads.
	MaxREQEvents = MaxLimit
	// MaxPage bounds a plain bridge filter's page.
	MaxPage = 1_000_000
	// The channel window's limit: default and clamp.
	WindowDefaultLimit = 50
	WindowMaxLimit     = 200
	// The thread panel's limit: default and clamp.
	ThreadDefaultLimit = 100
	ThreadMaxLimit     = 500
	// MaxAuxPerHop caps each hop of the channel window's aux closure
	// (NIP-CW: a relay may cap each hop; Buzz caps at 1000). A capped hop
	// keeps the newest events, created_at DESC then id ASC; NIP-CW names no
	// truncation signal, so 39006 carries none and nothing is advertised.
	MaxAuxPerHop = 1000
	// MaxDepthLimit caps a filter's depth_limit: no thread is deeper than
	// MaxThreadDepth, and a root's depth plus this fits an int4.
	MaxDepthLimit = 1 << 20
)

// Limits of a NIP-77 reconciliation (shared/service/negentropy).
const (
	// MaxNegentropyItems bounds the events one reconciliation covers: a
	// filter that matches more is answered NEG-ERR "blocked:" (narrow it,
	// e.g. by since/until). Every round reads the set again (no process
	// holds it between messages), so the bound is one round's read.
	MaxNegentropyItems = 50_000
	// NegentropyFrameSize bounds one NEG-MSG the relay sends, in bytes
	// before hex: twice it plus the envelope fits MaxMessageLength, which
	// bounds what the client sends.
	NegentropyFrameSize = (MaxMessageLength - 1024) / 2
)

// Limits of what one key keeps.
const (
	// MaxThreadDepth caps a reply's depth; deeper replies stay at the cap.
	MaxThreadDepth = 100
	// MaxReactionsPerKey bounds the reactions one key keeps on one event
	// (one per content).
	MaxReactionsPerKey = 20
)

// Software and Version name this relay.
const (
	Software = "buzz-serverless-relay"
	Version  = "0.1.0"
)

// Document is the NIP-11 relay information document.
type Document struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Icon        string `json:"icon,omitempty"`
	Pubkey      string `json:"pubkey"`
	// Self is the key that signs the relay's own events (NIP-11 self):
	// Flotilla encrypts its NIP-9a subscriptions to it.
	Self string `json:"self"`
	// SupportedNIPs and SupportedNIPNames are supported_nips, one JSON
	// array (MarshalJSON): the numbered NIPs as integers, then the NIPs
	// whose number is not an integer as strings ("9a"), which is how
	// clients look for them (Flotilla: supported_nips.map(String)
	// .includes("9a")).
	SupportedNIPs     []int    `json:"-"`
	SupportedNIPNames []string `json:"-"`
	// SupportedExtensions names the draft NIPs served that have no number
	// yet, as they ask to be advertised: "nip-er" (NIP-ER reminders).
	SupportedExtensions []string   `json:"supported_extensions"`
	Software            string     `json:"software"`
	Version             string     `json:"version"`
	Limitation          Limitation `json:"limitation"`
	// RateLimits are the per-key and per-connection limits (not a NIP-11
	// field; 0 = none); absent when the relay applies none.
	RateLimits *RateLimits `json:"rate_limits,omitempty"`
	// Media is the Blossom media service on the relay's hostname (not a
	// NIP-11 field); absent when media is off.
	Media *Media `json:"media,omitempty"`
	// ReadStateSnapshot advertises NIP-RS's read_state_snapshot on POST
	// /query (Buzz's field; readstate.go).
	ReadStateSnapshot *ReadStateSnapshot `json:"read_state_snapshot,omitempty"`
	// BuzzV1 advertises Buzz's read-state API /buzz/v1 (buzzv1.go).
	BuzzV1 *BuzzV1 `json:"buzz_v1,omitempty"`
	// Push is NIP-PL's push descriptor (AdvertisePush); absent when
	// leases are off.
	Push *push.Descriptor `json:"push,omitempty"`
	// GIF is Buzz's GIF proxy descriptor (AdvertiseGIF); absent when no
	// provider key is configured.
	GIF *GIF `json:"gif,omitempty"`
}

// GIF is Buzz's "gif" descriptor: the provider and the relay-relative
// paths of its search and share routes.
type GIF struct {
	Provider string `json:"provider"`
	Search   string `json:"search"`
	Share    string `json:"share"`
}

// Buzz's GIF proxy, as its relay advertises it (block/buzz
// docs/gifs.md): "buzz-gif" in supported_extensions and the gif
// descriptor naming KLIPY and its two routes.
const (
	ExtensionGIF  = "buzz-gif"
	GIFProvider   = "klipy"
	GIFSearchPath = "/gifs/search"
	GIFSharePath  = "/gifs/share"
)

// AdvertiseGIF lists the GIF proxy (on: a provider key is configured).
func (d *Document) AdvertiseGIF(on bool) {
	if !on {
		return
	}
	if !slices.Contains(d.SupportedExtensions, ExtensionGIF) {
		d.SupportedExtensions = append(d.SupportedExtensions, ExtensionGIF)
	}
	d.GIF = &GIF{Provider: GIFProvider, Search: GIFSearchPath, Share: GIFSharePath}
}

// Push notifications' names: NIP-9a in supported_nips (a string: its
// number is not an integer) and in supported_extensions, and NIP-PL.
const (
	NIP9a          = "9a"
	ExtensionNIP9a = "nip-9a"
)

// AdvertisePush lists NIP-9a when subscriptions are served and NIP-PL with
// its descriptor d when leases are (d nil: not).
func (d *Document) AdvertisePush(subscriptions bool, desc *push.Descriptor) {
	if subscriptions && !slices.Contains(d.SupportedExtensions, ExtensionNIP9a) {
		d.SupportedExtensions = append(d.SupportedExtensions, ExtensionNIP9a)
	}
	if subscriptions && !slices.Contains(d.SupportedNIPNames, NIP9a) {
		d.SupportedNIPNames = append(d.SupportedNIPNames, NIP9a)
	}
	if desc != nil {
		if !slices.Contains(d.SupportedExtensions, push.ExtensionNIPPL) {
			d.SupportedExtensions = append(d.SupportedExtensions, push.ExtensionNIPPL)
		}
		d.Push = desc
	}
}

// documentJSON is Document without its methods (MarshalJSON and
// UnmarshalJSON encode it, supported_nips apart).
type documentJSON Document

// MarshalJSON writes d with supported_nips as one array: the integers of
// SupportedNIPs, then the names of SupportedNIPNames.
func (d Document) MarshalJSON() ([]byte, error) {
	nips := make([]any, 0, len(d.SupportedNIPs)+len(d.SupportedNIPNames))
	for _, n := range d.SupportedNIPs {
		nips = append(nips, n)
	}
	for _, n := range d.SupportedNIPNames {
		nips = append(nips, n)
	}
	return json.Marshal(struct {
		documentJSON
		NIPs []any `json:"supported_nips"`
	}{documentJSON(d), nips})
}

// UnmarshalJSON reads a document MarshalJSON wrote (or any NIP-11
// document): supported_nips' integers into SupportedNIPs, its strings into
// SupportedNIPNames; another value there is an error.
func (d *Document) UnmarshalJSON(b []byte) error {
	var v struct {
		*documentJSON
		NIPs []json.RawMessage `json:"supported_nips"`
	}
	v.documentJSON = (*documentJSON)(d)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d.SupportedNIPs, d.SupportedNIPNames = nil, nil
	for _, raw := range v.NIPs {
		var n int
		if err := json.Unmarshal(raw, &n); err == nil {
			d.SupportedNIPs = append(d.SupportedNIPs, n)
			continue
		}
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return fmt.Errorf("relayinfo: supported_nips holds %s, neither an integer nor a string", raw)
		}
		d.SupportedNIPNames = append(d.SupportedNIPNames, name)
	}
	return nil
}

// MediaEndpoints are the Blossom (BUD-01, 02, 06) and Buzz media routes
// the relay's hostname serves when media is on.
var MediaEndpoints = []string{
	"GET /<sha256>[.ext]", "HEAD /<sha256>[.ext]", "PUT /upload", "HEAD /upload", "DELETE /<sha256>",
	"GET /list/<pubkey>", "PUT /media/upload", "HEAD /media/upload", "POST /media/upload",
	"GET /media/<sha256>", "HEAD /media/<sha256>", "DELETE /media/<sha256>",
}

// Media is the media service's endpoints and limits as NIP-11 shows them
// (shared/domain/blossom's Limits).
type Media struct {
	Endpoints []string `json:"endpoints"`
	// MaxBlobBytes is the largest blob; DirectUploadMaxBytes the largest
	// body PUT /upload takes (larger: POST /media/upload for a presigned
	// upload URL).
	MaxBlobBytes         int64 `json:"max_blob_bytes"`
	DirectUploadMaxBytes int64 `json:"direct_upload_max_bytes"`
	KeyBytesPerDay       int64 `json:"key_bytes_per_day"`
	CommunityBytesStored int64 `json:"community_bytes_stored"`
	// PresignSeconds is how long a presigned upload or download URL lives.
	PresignSeconds int64 `json:"presign_seconds"`
	// Uploaders says who may upload.
	Uploaders string `json:"uploaders"`
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
	MaxMessageLength int `json:"max_message_length"`
	MaxSubscriptions int `json:"max_subscriptions"`
	MaxFilters       int `json:"max_filters"`
	// MaxHTTPFilters is not a NIP-11 field (clients ignore fields they do
	// not know): the filters of one POST /query or POST /count.
	MaxHTTPFilters int `json:"max_http_filters"`
	MaxLimit       int `json:"max_limit"`
	// MaxREQEvents is not a NIP-11 field: the stored events one REQ is
	// answered with across its filters.
	MaxREQEvents        int   `json:"max_req_events"`
	DefaultLimit        int   `json:"default_limit"`
	MaxEventTags        int   `json:"max_event_tags"`
	MaxContentLength    int   `json:"max_content_length"`
	AuthRequired        bool  `json:"auth_required"`
	RestrictedWrites    bool  `json:"restricted_writes"`
	CreatedAtLowerLimit int64 `json:"created_at_lower_limit"`
	CreatedAtUpperLimit int64 `json:"created_at_upper_limit"`
	PaymentRequired     bool  `json:"payment_required"`
	MaxSubidLength      int   `json:"max_subid_length"`
	// DueDeliveryMode is NIP-ER's: "lazy", a reminder is served on every
	// read by its author and never pushed again when its not_before passes.
	DueDeliveryMode string `json:"due_delivery_mode"`
}

// NIP-ER's advertisement: the extension's name in supported_extensions and
// how due reminders are delivered.
const (
	ExtensionNIPER  = "nip-er"
	DueDeliveryLazy = "lazy"
)

// New describes the relay whose key is relayPubkey.
func New(relayPubkey string) Document {
	return Document{
		Name:                "Buzz relay",
		Description:         "Serverless NIP-29 group relay with Buzz's HTTP bridge and channel window",
		Pubkey:              relayPubkey,
		Self:                relayPubkey,
		SupportedNIPs:       supportedNIPs(),
		SupportedExtensions: []string{ExtensionNIPER},
		Software:            Software,
		Version:             Version,
		Limitation: Limitation{
			MaxMessageLength:    MaxMessageLength,
			MaxSubscriptions:    MaxSubscriptions,
			MaxFilters:          MaxFilters,
			MaxHTTPFilters:      MaxHTTPFilters,
			MaxLimit:            MaxLimit,
			MaxREQEvents:        MaxREQEvents,
			DefaultLimit:        DefaultLimit,
			MaxEventTags:        MaxEventTags,
			MaxContentLength:    MaxContentLength,
			AuthRequired:        true,
			RestrictedWrites:    true,
			CreatedAtLowerLimit: CreatedAtWindow,
			CreatedAtUpperLimit: CreatedAtWindow,
			MaxSubidLength:      MaxSubIDLength,
			DueDeliveryMode:     DueDeliveryLazy,
		},
	}
}

// NIP43 is NIP-43 (relay membership), advertised only by a community that
// enforces it (its ServedNIPs row is Conditional).
const NIP43 = 43

// AdvertiseMembership lists NIP-43 in supported_nips when the community
// enforces relay membership (enforced), in order.
func (d *Document) AdvertiseMembership(enforced bool) {
	if !enforced || slices.Contains(d.SupportedNIPs, NIP43) {
		return
	}
	d.SupportedNIPs = append(d.SupportedNIPs, NIP43)
	slices.Sort(d.SupportedNIPs)
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
