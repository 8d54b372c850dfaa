package negentropy

import (
	"encoding/hex"

	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// Version is the negentropy protocol version this relay speaks (NIP-77:
// 0x61, version 1).
const Version = 0x61

// idSize is the bytes of one id in an IdList, the most a bound's id
// prefix may have.
const idSize = 32

// CheckMessage refuses a client's negentropy message that is not
// lowercase hex of whole bytes, or whose ranges are malformed, before the
// library reads it: the library trusts a range's count of ids (an IdList
// claiming a billion ids would have it allocate for them), so every
// count and length is held to the bytes actually present. A message of
// another protocol version passes (the server side answers it with its
// own version, as NIP-77 says).
func CheckMessage(msg string) error {
	if msg == "" {
		return reject.Invalidf("negentropy message is empty")
	}
	if len(msg)%2 != 0 {
		return reject.Invalidf("negentropy message has an odd number of hex digits")
	}
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return reject.Invalidf("negentropy message is not lowercase hex (character %d)", i)
		}
	}
	b, _ := hex.DecodeString(msg)
	if b[0] != Version {
		return nil
	}
	r := frame{b: b[1:]}
	for n := 0; len(r.b) > 0; n++ {
		if err := r.bound(); err != nil {
			return reject.Invalidf("negentropy range %d: %s", n, err)
		}
		mode, err := r.varint()
		if err != nil {
			return reject.Invalidf("negentropy range %d: mode: %s", n, err)
		}
		switch mode {
		case 0: // skip
		case 1: // fingerprint
			err = r.skip(neg.FingerprintSize, "fingerprint")
		case 2: // id list
			var ids int
			if ids, err = r.varint(); err == nil {
				if ids > len(r.b)/idSize {
					err = problem("an id list claims more ids than the message holds")
				} else {
					err = r.skip(ids*idSize, "id list")
				}
			}
		default:
			err = problem("unknown mode")
		}
		if err != nil {
			return reject.Invalidf("negentropy range %d: %s", n, err)
		}
	}
	return nil
}

type problem string

func (p problem) Error() string { return string(p) }

// frame reads a negentropy message's fields.
type frame struct{ b []byte }

// varint reads a varint of at most 8 bytes (56 bits: any count or
// timestamp delta fits).
func (f *frame) varint() (int, error) {
	v := 0
	for i := 0; i < 8; i++ {
		if len(f.b) == 0 {
			return 0, problem("truncated varint")
		}
		c := f.b[0]
		f.b = f.b[1:]
		v = v<<7 | int(c&127)
		if c&128 == 0 {
			return v, nil
		}
	}
	return 0, problem("varint longer than 8 bytes")
}

func (f *frame) skip(n int, what string) error {
	if n > len(f.b) {
		return problem("truncated " + what)
	}
	f.b = f.b[n:]
	return nil
}

// bound reads a range's upper bound: a timestamp and an id prefix of at
// most idSize bytes.
func (f *frame) bound() error {
	if _, err := f.varint(); err != nil {
		return problem("bound timestamp: " + err.Error())
	}
	n, err := f.varint()
	if err != nil {
		return problem("bound length: " + err.Error())
	}
	if n > idSize {
		return problem("bound id longer than 32 bytes")
	}
	return f.skip(n, "bound id")
}
