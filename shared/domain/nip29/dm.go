package nip29

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
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

// DMMetadataTags are a DM's 39000 tags: the metadata, then one p per
// participant (Buzz clients list their DMs by {"kinds":[39000],"#p":[me]}).
func DMMetadataTags(ch *Channel, members []MemberRole) nostr.Tags {
	tags := MetadataTags(ch)
	for _, m := range members {
		tags = append(tags, nostr.Tag{"p", m.Pubkey})
	}
	return tags
}
