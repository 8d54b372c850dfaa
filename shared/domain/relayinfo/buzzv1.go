package relayinfo

// Buzz's private read-state API, /buzz/v1 (block/buzz
// crates/buzz-relay/src/api/buzz_v1, docs/buzz-v1.md): its bounds, as Buzz
// sets them and its desktop app requires them (supportsSidebarApi takes
// the API only with exactly these).
const (
	BuzzV1Version            = 1
	BuzzV1BasePath           = "/buzz/v1"
	BuzzV1MaxChannels        = 20      // sidebar rows per page, channel_ids per refresh
	BuzzV1MaxIntents         = 100     // intents per POST
	BuzzV1MaxContexts        = 20      // contexts per GET read-state
	BuzzV1MaxContextMessages = 100     // message ids across one GET read-state
	BuzzV1MaxThreadSummaries = 5       // thread items per sidebar row
	BuzzV1RetentionSeconds   = 2592000 // the unread horizon: 30 days of author time
	BuzzV1MaxWriteBody       = 64 * 1024
	BuzzV1MaxContextURL      = 16000
	// BuzzV1AllGroups is this relay's extension: a sidebar query with
	// all_groups=1 lists every joined group, not only UUID-named (Buzz's)
	// channels, so a NIP-29 client whose groups have other ids can use the
	// same API; Buzz's app never sends it and never sees such an id.
	BuzzV1AllGroups = "all_groups"
)

// BuzzV1EligibleKinds are the kinds that count as unread and as latest
// activity: Buzz's chat message, stream message, forum post and comment.
var BuzzV1EligibleKinds = []int{9, 40002, 45001, 45003}

// BuzzV1 is the NIP-11 field that advertises the API.
type BuzzV1 struct {
	Version            int      `json:"version"`
	BasePath           string   `json:"base_path"`
	RetentionSeconds   int      `json:"retention_seconds"`
	MaxChannels        int      `json:"max_channels"`
	MaxIntents         int      `json:"max_intents"`
	MaxContexts        int      `json:"max_contexts"`
	MaxContextMessages int      `json:"max_context_messages"`
	MaxThreadSummaries int      `json:"max_thread_summaries"`
	EligibleKinds      []int    `json:"eligible_kinds"`
	Extensions         []string `json:"extensions"`
}

// AdvertiseBuzzV1 adds the buzz_v1 field.
func (d *Document) AdvertiseBuzzV1() {
	d.BuzzV1 = &BuzzV1{Version: BuzzV1Version, BasePath: BuzzV1BasePath, RetentionSeconds: BuzzV1RetentionSeconds,
		MaxChannels: BuzzV1MaxChannels, MaxIntents: BuzzV1MaxIntents, MaxContexts: BuzzV1MaxContexts,
		MaxContextMessages: BuzzV1MaxContextMessages, MaxThreadSummaries: BuzzV1MaxThreadSummaries,
		EligibleKinds: BuzzV1EligibleKinds, Extensions: []string{BuzzV1AllGroups}}
}
