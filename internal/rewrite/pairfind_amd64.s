#include "textflag.h"

// func pairIndexVector(p, q *byte, n int, ora, ca, orb, cb byte) int
//
// Two 32-byte loads a step, one at each offset; each is ORed with its
// letter-case bit, compared with its byte, and the two masks ANDed. The
// first set bit is the answer.
TEXT ·pairIndexVector(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    q+8(FP), DI
	MOVQ    n+16(FP), DX
	// Broadcast from memory: a legacy-SSE MOVQ into an XMM register
	// between VEX instructions that left the upper halves dirty costs a
	// state transition each time (Intel's optimization manual, "Mixing
	// AVX code with SSE code"), several times the whole search.
	VPBROADCASTB ora+24(FP), Y0
	VPBROADCASTB ca+25(FP), Y1
	VPBROADCASTB orb+26(FP), Y2
	VPBROADCASTB cb+27(FP), Y3
	XORQ    CX, CX

loop64:
	LEAQ    64(CX), AX
	CMPQ    AX, DX
	JA      loop32
	VMOVDQU (SI)(CX*1), Y4
	VMOVDQU (DI)(CX*1), Y5
	VMOVDQU 32(SI)(CX*1), Y6
	VMOVDQU 32(DI)(CX*1), Y7
	VPOR    Y0, Y4, Y4
	VPOR    Y2, Y5, Y5
	VPOR    Y0, Y6, Y6
	VPOR    Y2, Y7, Y7
	VPCMPEQB Y1, Y4, Y4
	VPCMPEQB Y3, Y5, Y5
	VPCMPEQB Y1, Y6, Y6
	VPCMPEQB Y3, Y7, Y7
	VPAND   Y4, Y5, Y5
	VPAND   Y6, Y7, Y7
	VPOR    Y5, Y7, Y8
	VPTEST  Y8, Y8
	JNZ     found64
	MOVQ    AX, CX
	JMP     loop64

found64:
	VPMOVMSKB Y5, BX
	TESTL   BX, BX
	JNZ     found
	VPMOVMSKB Y7, BX
	ADDQ    $32, CX
	JMP     found

loop32:
	LEAQ    32(CX), AX
	CMPQ    AX, DX
	JA      none
	VMOVDQU (SI)(CX*1), Y4
	VMOVDQU (DI)(CX*1), Y5
	VPOR    Y0, Y4, Y4
	VPOR    Y2, Y5, Y5
	VPCMPEQB Y1, Y4, Y4
	VPCMPEQB Y3, Y5, Y5
	VPAND   Y4, Y5, Y5
	VPMOVMSKB Y5, BX
	TESTL   BX, BX
	JNZ     found
	MOVQ    AX, CX
	JMP     loop32

found:
	BSFL    BX, BX
	ADDQ    BX, CX
	VZEROUPPER
	MOVQ    CX, ret+32(FP)
	RET

none:
	VZEROUPPER
	NOTQ    CX
	MOVQ    CX, ret+32(FP)
	RET
