package voiceprint

import "math/bits"

// nearGo is the portable nearWords: for every w < len(dst) and j < 64, bit
// j of dst[w] is set when a[64w+j] and b[64w+j] differ in at most
// loopHamming bits. a and b must hold at least 64·len(dst) values.
func nearGo(dst []uint64, a, b []uint32) {
	a, b = a[:64*len(dst)], b[:64*len(dst)]
	for w := range dst {
		x, y := a[64*w:64*w+64], b[64*w:64*w+64]
		var word uint64
		for j := range x {
			// 1 when at most loopHamming bits differ, without a branch.
			m := uint64(bits.OnesCount32(x[j]^y[j])-loopHamming-1) >> 63
			word |= m << uint(j)
		}
		dst[w] = word
	}
}
