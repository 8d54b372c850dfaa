// Package sigverify checks BIP-340 Schnorr signatures, the signatures of
// nostr events (NIP-01).
//
// A Verifier belongs to one warm instance and remembers the keys it has
// checked: the key's point is lifted once, and for a key that keeps
// signing it builds a table of multiples of that point (table.go), which
// makes each further check about a third as expensive. The verdict is always
// BIP-340's; what a Verifier remembers changes only the cost. Its memory is
// bounded: Options.Keys points per generation and Options.Tables tables.
package sigverify

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	secp "github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/nbd-wtf/go-nostr"
)

// Why Event refused an event.
var (
	ErrID  = errors.New("id does not match the event's serialized hash")
	ErrSig = errors.New("signature does not verify")
)

// Options bound a Verifier. Zero fields take the defaults.
type Options struct {
	// Keys is how many keys one generation remembers (DefaultKeys). A key
	// not checked for two generations is forgotten.
	Keys int
	// Tables is how many keys hold a table at once (DefaultTables); each
	// table is 217 KB.
	Tables int
	// After is the check of a key that builds its table (DefaultAfter). A
	// table costs about as much as 25 checks and saves two thirds of each
	// check after it, so it pays for itself some 35 checks later: building
	// on the 32nd keeps a key's cost within about twice what hindsight
	// would have chosen, and a key that signs a few times never pays.
	After int
}

// Defaults: 64 tables are 14 MB; 4,096 keys a generation about 1 MB.
const (
	DefaultKeys   = 4096
	DefaultTables = 64
	DefaultAfter  = 32
)

// Verifier checks signatures, remembering keys as the package says. It is
// safe for concurrent use; the nil Verifier checks without remembering.
type Verifier struct {
	o        Options
	mu       sync.Mutex
	cur, old map[[32]byte]*key
	tables   int // tables built or being built, over cur and old
}

// key is one remembered key.
type key struct {
	p        secp.JacobianPoint // lift_x of the key, Z = 1
	uses     int
	tab      *table // nil until built
	building bool
}

// New returns a Verifier bounded by o.
func New(o Options) *Verifier {
	if o.Keys <= 0 {
		o.Keys = DefaultKeys
	}
	if o.Tables < 0 {
		o.Tables = 0
	} else if o.Tables == 0 {
		o.Tables = DefaultTables
	}
	if o.After <= 0 {
		o.After = DefaultAfter
	}
	return &Verifier{o: o, cur: map[[32]byte]*key{}, old: map[[32]byte]*key{}}
}

// Event checks that ev's id is the hash of its serialization (NIP-01) and
// that its sig is its pubkey's BIP-340 signature of that id: ErrID or
// ErrSig says which failed.
func (v *Verifier) Event(ev *nostr.Event) error {
	id := sha256.Sum256(ev.Serialize())
	if hex.EncodeToString(id[:]) != ev.ID {
		return ErrID
	}
	var pub [32]byte
	var sig [64]byte
	if len(ev.PubKey) != 2*len(pub) || len(ev.Sig) != 2*len(sig) {
		return ErrSig
	}
	if _, err := hex.Decode(pub[:], []byte(ev.PubKey)); err != nil {
		return ErrSig
	}
	if _, err := hex.Decode(sig[:], []byte(ev.Sig)); err != nil {
		return ErrSig
	}
	if !v.Verify(&pub, &id, &sig) {
		return ErrSig
	}
	return nil
}

// Verify reports whether sig is a valid BIP-340 signature of the 32-byte
// msg by the x-only key pub.
func (v *Verifier) Verify(pub, msg *[32]byte, sig *[64]byte) bool {
	if v == nil {
		var p secp.JacobianPoint
		return lift(pub, &p) && verify(&p, nil, pub, msg, sig)
	}
	k, tab := v.lookup(pub)
	if k == nil {
		return false // not a key: no point lifts from it
	}
	return verify(&k.p, tab, pub, msg, sig)
}

// lookup returns pub's remembered key (lifting it when new, nil when it
// does not lift) and its table if built, counting the use; the use that
// reaches After builds the table.
func (v *Verifier) lookup(pub *[32]byte) (*key, *table) {
	v.mu.Lock()
	k := v.find(pub)
	if k == nil {
		v.mu.Unlock()
		nk := &key{}
		if !lift(pub, &nk.p) {
			return nil, nil
		}
		v.mu.Lock()
		if k = v.find(pub); k == nil { // another check may have added it
			k = nk
			v.keep(pub, k)
		}
	}
	k.uses++
	tab := k.tab
	build := tab == nil && !k.building && k.uses >= v.o.After && v.tables < v.o.Tables
	if build {
		k.building = true
		v.tables++
	}
	v.mu.Unlock()
	if build {
		t := newTable(&k.p)
		v.mu.Lock()
		k.tab, k.building = t, false
		v.mu.Unlock()
		tab = t
	}
	return k, tab
}

// find returns pub's key from either generation, moving it into the
// current one. v.mu is held.
func (v *Verifier) find(pub *[32]byte) *key {
	if k := v.cur[*pub]; k != nil {
		return k
	}
	k := v.old[*pub]
	if k != nil {
		delete(v.old, *pub)
		v.keep(pub, k)
	}
	return k
}

// keep puts k into the current generation, starting a new one when it is
// full (the oldest is forgotten, and its tables with it). v.mu is held.
func (v *Verifier) keep(pub *[32]byte, k *key) {
	if len(v.cur) >= v.o.Keys {
		for _, f := range v.old {
			if f.tab != nil || f.building {
				v.tables--
			}
		}
		v.old, v.cur = v.cur, make(map[[32]byte]*key, len(v.cur))
	}
	v.cur[*pub] = k
}

// lift sets p to the point with x-coordinate pub and an even y (BIP-340's
// lift_x) and reports whether there is one.
func lift(pub *[32]byte, p *secp.JacobianPoint) bool {
	if p.X.SetBytes(pub) != 0 { // x ≥ the field size
		return false
	}
	if !secp.DecompressY(&p.X, false, &p.Y) {
		return false
	}
	p.Z.SetInt(1)
	return true
}

// challengeTag is BIP-340's tag of the challenge hash, hashed.
var challengeTag = sha256.Sum256([]byte("BIP0340/challenge"))

// verify is BIP-340's Verify with P = lift_x(pub) given as p (and tab, its
// table, when there is one).
func verify(p *secp.JacobianPoint, tab *table, pub, msg *[32]byte, sig *[64]byte) bool {
	var r secp.FieldVal
	if r.SetByteSlice(sig[:32]) { // r ≥ the field size
		return false
	}
	var s secp.ModNScalar
	if s.SetByteSlice(sig[32:]) { // s ≥ the group order
		return false
	}
	// e = int(hash_challenge(r || x(P) || m)) mod n, negated: R = s·G + (−e)·P.
	h := sha256.New()
	h.Write(challengeTag[:])
	h.Write(challengeTag[:])
	h.Write(sig[:32])
	h.Write(pub[:])
	h.Write(msg[:])
	var sum [32]byte
	h.Sum(sum[:0])
	var e secp.ModNScalar
	e.SetBytes(&sum)
	e.Negate()
	var sG, eP, R secp.JacobianPoint
	secp.ScalarBaseMultNonConst(&s, &sG)
	if tab != nil {
		tab.mul(&e, &eP)
	} else {
		secp.ScalarMultNonConst(&e, p, &eP)
	}
	secp.AddNonConst(&sG, &eP, &R)
	if (R.X.IsZero() && R.Y.IsZero()) || R.Z.IsZero() {
		return false // infinity
	}
	R.ToAffine()
	return !R.Y.IsOdd() && R.X.Equals(&r)
}
