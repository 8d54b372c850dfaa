package sigverify

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	secp "github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/nbd-wtf/go-nostr"
)

// verifiers are the ways a check can run: without remembering, remembering
// without a table yet, and with the key's table.
func verifiers() map[string]func(pub, msg *[32]byte, sig *[64]byte) bool {
	tabled := New(Options{After: 1})
	return map[string]func(pub, msg *[32]byte, sig *[64]byte) bool{
		"nil":   (*Verifier)(nil).Verify,
		"kept":  New(Options{After: 1 << 30}).Verify,
		"table": tabled.Verify,
	}
}

// TestBIP340Vectors runs BIP-340's test vectors with a 32-byte message
// (testdata/bip340.csv, indices 0 to 14) through every path.
func TestBIP340Vectors(t *testing.T) {
	f, err := os.Open("testdata/bip340.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 16 {
		t.Fatalf("%d rows, want the header and 15 vectors", len(rows))
	}
	for name, verify := range verifiers() {
		for _, row := range rows[1:] {
			var pub, msg [32]byte
			var sig [64]byte
			mustHex(t, row[2], pub[:])
			mustHex(t, row[4], msg[:])
			mustHex(t, row[5], sig[:])
			want := row[6] == "TRUE"
			// Twice: the table path builds on the first use, uses it on the second.
			for range 2 {
				if got := verify(&pub, &msg, &sig); got != want {
					t.Errorf("%s: vector %s (%s): got %v, want %v", name, row[0], row[7], got, want)
				}
			}
		}
	}
}

func mustHex(t *testing.T, s string, dst []byte) {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(dst) {
		t.Fatalf("bad hex %q", s)
	}
	copy(dst, b)
}

// reference is btcec's verdict, with BIP-340's s < n, which btcec's
// ParseSignature leaves out (it reduces s instead).
func reference(pub, msg *[32]byte, sig *[64]byte) bool {
	var s secp.ModNScalar
	if s.SetByteSlice(sig[32:]) {
		return false
	}
	pk, err := schnorr.ParsePubKey(pub[:])
	if err != nil {
		return false
	}
	sg, err := schnorr.ParseSignature(sig[:])
	if err != nil {
		return false
	}
	return sg.Verify(msg[:], pk)
}

// TestAgainstBtcec compares every path with btcec on signatures of random
// keys and messages, valid and altered one bit at a time.
func TestAgainstBtcec(t *testing.T) {
	vs := verifiers()
	for i := 0; i < 40; i++ {
		priv, err := btcec.NewPrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		var pub, msg [32]byte
		copy(pub[:], schnorr.SerializePubKey(priv.PubKey()))
		_, _ = rand.Read(msg[:])
		s, err := schnorr.Sign(priv, msg[:])
		if err != nil {
			t.Fatal(err)
		}
		var sig [64]byte
		copy(sig[:], s.Serialize())
		cases := []struct {
			name     string
			pub, msg [32]byte
			sig      [64]byte
		}{{"valid", pub, msg, sig}}
		for _, bit := range []int{0, 7, 255, 256, 300, 511} {
			c := cases[0]
			c.name = "sig bit"
			c.sig[bit/8] ^= 1 << (bit % 8)
			cases = append(cases, c)
		}
		c := cases[0]
		c.name, c.msg[31] = "msg bit", c.msg[31]^1
		cases = append(cases, c)
		c = cases[0]
		c.name, c.pub[0] = "pub bit", c.pub[0]^0x80
		cases = append(cases, c)
		for _, c := range cases {
			want := reference(&c.pub, &c.msg, &c.sig)
			if c.name == "valid" && !want {
				t.Fatal("btcec refused its own signature")
			}
			for name, verify := range vs {
				for range 2 {
					if got := verify(&c.pub, &c.msg, &c.sig); got != want {
						t.Errorf("key %d, %s, %s: got %v, btcec %v", i, c.name, name, got, want)
					}
				}
			}
		}
	}
}

// TestTableMul checks k·P from the table against the generic
// multiplication, for scalars at the edges of the digits and random ones.
func TestTableMul(t *testing.T) {
	priv, _ := btcec.NewPrivateKey()
	var p secp.JacobianPoint
	priv.PubKey().AsJacobian(&p)
	tab := newTable(&p)
	scalars := []string{
		"00", "01", "02", "0f", "10", "11", "ff", "0100",
		"f000000000000000000000000000000000000000000000000000000000000000",
		"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", // n − 1
		"8000000000000000000000000000000000000000000000000000000000000001",
	}
	for range 50 {
		var b [32]byte
		_, _ = rand.Read(b[:])
		scalars = append(scalars, hex.EncodeToString(b[:]))
	}
	for _, h := range scalars {
		b, _ := hex.DecodeString(strings.Repeat("0", 64-len(h)) + h)
		var k secp.ModNScalar
		k.SetByteSlice(b)
		var got, want secp.JacobianPoint
		tab.mul(&k, &got)
		secp.ScalarMultNonConst(&k, &p, &want)
		if !got.EquivalentNonConst(&want) {
			t.Errorf("k = %s: table and generic multiplication differ", h)
		}
	}
}

// TestEvent covers the id and signature checks of a nostr event.
func TestEvent(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	ev := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "hi", Tags: nostr.Tags{{"t", "x"}}}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	v := New(Options{After: 1})
	for range 3 {
		if err := v.Event(ev); err != nil {
			t.Fatalf("signed event: %v", err)
		}
	}
	bad := *ev
	bad.Content = "changed"
	if err := v.Event(&bad); err != ErrID {
		t.Errorf("changed content: %v, want ErrID", err)
	}
	bad = *ev
	bad.Sig = strings.Repeat("0", 128)
	if err := v.Event(&bad); err != ErrSig {
		t.Errorf("zero sig: %v, want ErrSig", err)
	}
	bad = *ev
	bad.Sig = ev.Sig[:126]
	if err := v.Event(&bad); err != ErrSig {
		t.Errorf("short sig: %v, want ErrSig", err)
	}
	bad = *ev
	bad.Sig = "zz" + ev.Sig[2:]
	if err := v.Event(&bad); err != ErrSig {
		t.Errorf("non-hex sig: %v, want ErrSig", err)
	}
	other := nostr.GeneratePrivateKey()
	bad = *ev
	if err := bad.Sign(other); err != nil {
		t.Fatal(err)
	}
	bad.PubKey = ev.PubKey // another key's signature
	if err := v.Event(&bad); err == nil {
		t.Error("a signature by another key was accepted")
	}
}

// TestBounds: the tables never exceed Options.Tables, whatever the keys,
// and a generation that fills forgets the one before it.
func TestBounds(t *testing.T) {
	v := New(Options{Keys: 8, Tables: 3, After: 2})
	var wg sync.WaitGroup
	keys := make([]*btcec.PrivateKey, 40)
	for i := range keys {
		keys[i], _ = btcec.NewPrivateKey()
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				priv := keys[(i*7+w)%len(keys)]
				var pub, msg [32]byte
				copy(pub[:], schnorr.SerializePubKey(priv.PubKey()))
				msg[0] = byte(i)
				s, _ := schnorr.Sign(priv, msg[:])
				var sig [64]byte
				copy(sig[:], s.Serialize())
				if !v.Verify(&pub, &msg, &sig) {
					t.Error("valid signature refused")
					return
				}
				v.mu.Lock()
				n, tables := len(v.cur)+len(v.old), v.tables
				v.mu.Unlock()
				if n > 16 || tables > 3 || tables < 0 {
					t.Errorf("%d keys and %d tables held, bounds 16 and 3", n, tables)
					return
				}
			}
		}()
	}
	wg.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	held := 0
	for _, m := range []map[[32]byte]*key{v.cur, v.old} {
		for _, k := range m {
			if k.tab != nil || k.building {
				held++
			}
		}
	}
	if held != v.tables {
		t.Errorf("the count says %d tables, the keys hold %d", v.tables, held)
	}
}

// FuzzVerify: on any input, every path gives btcec's verdict (with s < n).
func FuzzVerify(f *testing.F) {
	priv, _ := btcec.NewPrivateKey()
	var msg [32]byte
	s, _ := schnorr.Sign(priv, msg[:])
	f.Add(schnorr.SerializePubKey(priv.PubKey()), msg[:], s.Serialize())
	f.Add(make([]byte, 32), make([]byte, 32), make([]byte, 64))
	vs := verifiers()
	f.Fuzz(func(t *testing.T, pb, mb, sb []byte) {
		if len(pb) != 32 || len(mb) != 32 || len(sb) != 64 {
			return
		}
		pub, msg, sig := (*[32]byte)(pb), (*[32]byte)(mb), (*[64]byte)(sb)
		want := reference(pub, msg, sig)
		for name, verify := range vs {
			for range 2 {
				if got := verify(pub, msg, sig); got != want {
					t.Fatalf("%s: got %v, btcec %v", name, got, want)
				}
			}
		}
	})
}
