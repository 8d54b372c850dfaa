package nip29

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Buzz's DM channels (kinds 41010 open, 41011 add member): a DM is a
// private, hidden channel of type dm whose identity is its participant set,
// so opening a DM with the same keys in any order names the same channel.

// MinDMParticipants and MaxDMParticipants bound a DM's participant set, the
// sender included: one to eight other keys.
const MinDMParticipants, MaxDMParticipants = 2, 9

// DMFlags are a DM's flags: private, restricted, closed and hidden (a key
// outside it does not learn that it exists).
var DMFlags = Flags{Private: true, Restricted: true, Closed: true, Hidden: true}

// DMParticipants returns the sorted, deduplicated participant set of a
// 41010: the sender and every p tag. Each p must be a 64-hex key.
func DMParticipants(ev *nostr.Event) ([]string, error) {
	set := map[string]bool{ev.PubKey: true}
	others := 0
	for _, t := range ev.Tags {
		if len(t) < 1 || t[0] != "p" {
			continue
		}
		if len(t) < 2 || !eventcheck.LowerHex(t[1], 64) {
			return nil, reject.Invalidf("a p tag needs a 64-character lower-case hex key")
		}
		others++
		set[t[1]] = true
	}
	if others == 0 {
		return nil, reject.Invalidf("kind %d needs at least one p tag naming another participant", ev.Kind)
	}
	return DMSet(set)
}

// DMSet sorts a participant set and checks its size.
func DMSet(set map[string]bool) ([]string, error) {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) < MinDMParticipants || len(out) > MaxDMParticipants {
		return nil, reject.Invalidf("a DM has %d to %d participants, the sender included; this one would have %d",
			MinDMParticipants, MaxDMParticipants, len(out))
	}
	return out, nil
}

// DMChannelID is the channel id of a sorted participant set: a UUID-shaped
// id from the SHA-256 of the keys, the same for the same set.
func DMChannelID(sorted []string) string {
	h := sha256.New()
	for _, k := range sorted {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50 // version 5 (name-based, SHA)
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	x := hex.EncodeToString(b)
	return fmt.Sprintf("%s-%s-%s-%s-%s", x[0:8], x[8:12], x[12:16], x[16:20], x[20:32])
}

// IsDMID reports whether id lies in the DM id space: a lower-case UUID of
// version 5 with the RFC 4122 variant, the shape of every DMChannelID. The
// space belongs to the DM flows (CreatesDM): a DM's id is a public function
// of its participants, so no 9007 may create a channel there (a third key
// would take the DM over), and the refusal depends on the id alone, never on
// whether a DM exists (no oracle).
func IsDMID(id string) bool {
	if len(id) != 36 || id[14] != '5' || !strings.ContainsRune("89ab", rune(id[19])) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// CreatesDM reports whether an event of kind creates DM channels (41010
// opens one, 41011 the DM of a larger set). A channel of type dm that
// anything else created is not a DM, and no DM flow joins or uses it.
func CreatesDM(kind int) bool { return kind == kinds.DMOpen || kind == kinds.DMAddMember }

// ActsOnDM reports whether an event of kind, applied through NIP-29's
// moderation path, may act on a DM: a participant deletes their own events
// (9005) or leaves (9022); 41011 and 41012 are the DM flows'. NIP-29's
// group management (9000-9002, 9008, 9009, 9021) never reaches a DM: who is
// in it, its metadata and its life are the DM flows' alone.
func ActsOnDM(kind int) bool {
	switch kind {
	case kinds.DeleteEvent, kinds.LeaveRequest, kinds.DMAddMember, kinds.DMHide:
		return true
	}
	return false
}

// DMMetadataTags are a DM's 39000 tags: the metadata, then one p per
// participant (Buzz clients list their DMs by {"kinds":[39000],"#p":[me]}).
func DMMetadataTags(ch *Channel, members []MemberRole) nostr.Tags {
	tags := MetadataTags(ch)
	for _, m := range members {
		tags = append(tags, nostr.Tag{"p", m.Pubkey})
	}
	return tags
}
