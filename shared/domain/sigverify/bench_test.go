package sigverify

import (
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	secp "github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// BenchmarkVerify is one check of a valid signature on each path, and
// btcec's (go-nostr's CheckSignature) beside them.
//
//	go test ./shared/sigverify -run '^$' -bench . -benchmem
func BenchmarkVerify(b *testing.B) {
	priv, _ := btcec.NewPrivateKey()
	var pub, msg [32]byte
	copy(pub[:], schnorr.SerializePubKey(priv.PubKey()))
	msg[0] = 1
	s, _ := schnorr.Sign(priv, msg[:])
	var sig [64]byte
	copy(sig[:], s.Serialize())
	run := func(name string, verify func(pub, msg *[32]byte, sig *[64]byte) bool) {
		b.Run(name, func(b *testing.B) {
			verify(&pub, &msg, &sig) // builds the table, when the path has one
			for b.Loop() {
				if !verify(&pub, &msg, &sig) {
					b.Fatal("refused")
				}
			}
		})
	}
	run("btcec", reference)
	for _, name := range []string{"nil", "kept", "table"} {
		run(name, verifiers()[name])
	}
}

// BenchmarkTable is the cost of building one key's table.
func BenchmarkTable(b *testing.B) {
	priv, _ := btcec.NewPrivateKey()
	var p secp.JacobianPoint
	priv.PubKey().AsJacobian(&p)
	for b.Loop() {
		newTable(&p)
	}
}
