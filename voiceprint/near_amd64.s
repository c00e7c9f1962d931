//go:build !purego

#include "textflag.h"

// func nearAVX2(dst []uint64, a, b []uint32, limit uint32)
//
// For each word of dst, eight groups of eight lanes: x = a ^ b, the
// population count of each byte by looking its two nibbles up in a
// table (VPSHUFB), the bytes of each lane summed (VPMADDUBSW then
// VPMADDWD, multiplying by ones), compared with limit, and the eight
// lanes' results gathered into one byte of the word (VMOVMSKPS).
#define GROUP(off, shift) \
	VMOVDQU    off(SI), Y0      \
	VPXOR      off(DX), Y0, Y0  \
	VPAND      Y13, Y0, Y1      \
	VPSRLW     $4, Y0, Y0       \
	VPAND      Y13, Y0, Y0      \
	VPSHUFB    Y1, Y14, Y1      \
	VPSHUFB    Y0, Y14, Y0      \
	VPADDB     Y1, Y0, Y0       \
	VPMADDUBSW Y12, Y0, Y0      \
	VPMADDWD   Y11, Y0, Y0      \
	VPCMPGTD   Y0, Y15, Y0      \
	VMOVMSKPS  Y0, R9           \
	SHLQ       $shift, R9       \
	ORQ        R9, R8

TEXT ·nearAVX2(SB), NOSPLIT, $0-76
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         a_base+24(FP), SI
	MOVQ         b_base+48(FP), DX
	MOVL         limit+72(FP), AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU      nibbleCounts<>(SB), Y14
	VMOVDQU      lowNibbles<>(SB), Y13
	VMOVDQU      byteOnes<>(SB), Y12
	VMOVDQU      wordOnes<>(SB), Y11
	TESTQ        CX, CX
	JZ           done

word:
	XORQ R8, R8
	GROUP(0, 0)
	GROUP(32, 8)
	GROUP(64, 16)
	GROUP(96, 24)
	GROUP(128, 32)
	GROUP(160, 40)
	GROUP(192, 48)
	GROUP(224, 56)
	MOVQ R8, (DI)
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $8, DI
	DECQ CX
	JNZ  word

done:
	VZEROUPPER
	RET

// The population counts of 0 to 15, once for each 128-bit lane.
DATA nibbleCounts<>+0(SB)/8, $0x0302020102010100
DATA nibbleCounts<>+8(SB)/8, $0x0403030203020201
DATA nibbleCounts<>+16(SB)/8, $0x0302020102010100
DATA nibbleCounts<>+24(SB)/8, $0x0403030203020201
GLOBL nibbleCounts<>(SB), RODATA|NOPTR, $32

DATA lowNibbles<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL lowNibbles<>(SB), RODATA|NOPTR, $32

DATA byteOnes<>+0(SB)/8, $0x0101010101010101
DATA byteOnes<>+8(SB)/8, $0x0101010101010101
DATA byteOnes<>+16(SB)/8, $0x0101010101010101
DATA byteOnes<>+24(SB)/8, $0x0101010101010101
GLOBL byteOnes<>(SB), RODATA|NOPTR, $32

DATA wordOnes<>+0(SB)/8, $0x0001000100010001
DATA wordOnes<>+8(SB)/8, $0x0001000100010001
DATA wordOnes<>+16(SB)/8, $0x0001000100010001
DATA wordOnes<>+24(SB)/8, $0x0001000100010001
GLOBL wordOnes<>(SB), RODATA|NOPTR, $32
