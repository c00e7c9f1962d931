//go:build !amd64 || purego

package voiceprint

// hasAVX2 is false: this build has only the portable comparisons.
var hasAVX2 = false

// nearWords sets bit j of dst[w] when a[64w+j] and b[64w+j] differ in at
// most loopHamming bits (nearGo defines it). a and b must hold at least
// 64·len(dst) values.
func nearWords(dst []uint64, a, b []uint32) { nearGo(dst, a, b) }
