package relayinfo

// Limits of a NIP-RS read_state_snapshot answer on POST /query (Buzz's
// full-state load of a key's kind 30078 events): above either the answer is
// 413, never a partial list.
const (
	// ReadStateSnapshotMaxEvents is Buzz's cap on the events of one snapshot.
	ReadStateSnapshotMaxEvents = 4096
	// ReadStateSnapshotMaxBytes bounds the stored bytes of the snapshot's
	// events: the HTTP answer budget (Buzz advertises 8 MiB; Lambda's
	// response limit keeps this relay's lower).
	ReadStateSnapshotMaxBytes = MaxHTTPResponseLength
	// ReadStateSnapshotVersion is the one version of the extension.
	ReadStateSnapshotVersion = 1
)

// ReadStateSnapshot is the NIP-11 field that advertises the extension, as
// Buzz's relay shows it: the community the snapshot is scoped to and its
// caps.
type ReadStateSnapshot struct {
	CommunityID        string `json:"community_id"`
	MaxEventArrayBytes int    `json:"max_event_array_bytes"`
	MaxEvents          int    `json:"max_events"`
	Version            int    `json:"version"`
}

// AdvertiseReadStateSnapshot adds the read_state_snapshot field for
// community.
func (d *Document) AdvertiseReadStateSnapshot(community string) {
	d.ReadStateSnapshot = &ReadStateSnapshot{CommunityID: community, MaxEventArrayBytes: ReadStateSnapshotMaxBytes,
		MaxEvents: ReadStateSnapshotMaxEvents, Version: ReadStateSnapshotVersion}
}
