//go:build !purego

package voiceprint

import "golang.org/x/sys/cpu"

// hasAVX2 selects nearAVX2; tests turn it off to check the portable path.
var hasAVX2 = cpu.X86.HasAVX2

// nearAVX2 is nearWords in AVX2 (near_amd64.s): eight comparisons per
// instruction, the population counts by nibble table lookups. A bit of dst
// is set when the count is below limit. a and b must hold 64·len(dst)
// values.
//
//go:noescape
func nearAVX2(dst []uint64, a, b []uint32, limit uint32)

// nearWords sets bit j of dst[w] when a[64w+j] and b[64w+j] differ in at
// most loopHamming bits (nearGo defines it). a and b must hold at least
// 64·len(dst) values.
func nearWords(dst []uint64, a, b []uint32) {
	if !hasAVX2 {
		nearGo(dst, a, b)
		return
	}
	n := 64 * len(dst)
	nearAVX2(dst, a[:n], b[:n], loopHamming+1)
}
