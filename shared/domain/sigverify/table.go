package sigverify

import (
	secp "github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// A table holds, for one point P, every multiple d·2^(w·i)·P with a digit d
// from 1 to 2^w−1 and a window i from 0 to windows−1, in affine coordinates.
// k·P is then the sum of one table point per non-zero w-bit digit of k:
// 43 mixed additions and no doubling, where a generic multiplication
// doubles about 130 times and adds about 50 times. A table is 2,709 points,
// 217 KB, and costs about as much as 25 checks to build (BenchmarkTable);
// 4-bit windows make it 77 KB and 8 checks, for a check a third slower.
const (
	window    = 6
	windows   = (256 + window - 1) / window // 43
	perWindow = 1<<window - 1               // 63
)

// affine is a normalized point with Z = 1 left out.
type affine struct{ x, y secp.FieldVal }

type table [windows][perWindow]affine

// newTable builds the table of p, a point other than infinity of the
// secp256k1 group (no multiple in the table is then infinity: each is
// below n·P).
func newTable(p *secp.JacobianPoint) *table {
	pts := make([]secp.JacobianPoint, windows*perWindow)
	var base secp.JacobianPoint
	base.Set(p)
	for i := 0; i < windows; i++ {
		row := pts[i*perWindow : (i+1)*perWindow]
		row[0].Set(&base)
		for d := 1; d < perWindow; d++ {
			secp.AddNonConst(&row[d-1], &base, &row[d])
		}
		// 2^w·base, the base of the next window.
		secp.AddNonConst(&row[perWindow-1], &base, &base)
	}
	// Montgomery's trick: one inversion for every Z.
	prefix := make([]secp.FieldVal, len(pts))
	var acc secp.FieldVal
	acc.SetInt(1)
	for i := range pts {
		prefix[i].Set(&acc)
		acc.Mul(&pts[i].Z)
	}
	acc.Inverse()
	t := new(table)
	var zInv, zInv2 secp.FieldVal
	for i := len(pts) - 1; i >= 0; i-- {
		zInv.Mul2(&acc, &prefix[i]) // 1/Z_i
		acc.Mul(&pts[i].Z)          // 1/(Z_0…Z_{i-1})
		zInv2.SquareVal(&zInv)
		a := &t[i/perWindow][i%perWindow]
		a.x.Mul2(&pts[i].X, &zInv2).Normalize()
		a.y.Mul2(&pts[i].Y, zInv2.Mul(&zInv)).Normalize()
	}
	return t
}

// mul sets r to k·P, P being the table's point. r is normalized.
func (t *table) mul(k *secp.ModNScalar, r *secp.JacobianPoint) {
	r.X.Zero()
	r.Y.Zero()
	r.Z.Zero() // infinity
	b := k.Bytes()
	var q secp.JacobianPoint
	q.Z.SetInt(1)
	for i := 0; i < windows; i++ {
		d := digit(&b, i)
		if d == 0 {
			continue
		}
		a := &t[i][d-1]
		q.X.Set(&a.x)
		q.Y.Set(&a.y)
		secp.AddNonConst(r, &q, r)
	}
}

// digit is the i-th w-bit digit of the big-endian 256-bit number b, the
// least significant first.
func digit(b *[32]byte, i int) int {
	bit := i * window
	v := 0
	for j := 0; j < window && bit+j < 256; j++ {
		n := bit + j
		if b[31-n/8]>>(n%8)&1 == 1 {
			v |= 1 << j
		}
	}
	return v
}
