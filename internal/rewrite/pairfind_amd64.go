package rewrite

import "golang.org/x/sys/cpu"

// havePairVector: pairIndexVector runs on AVX2.
var havePairVector = cpu.X86.HasAVX2

// pairBlock is the bytes the vector loop compares at a time.
const pairBlock = 32

// pairIndexVector is the first j in [0, n) with p[j]|ora == ca and
// q[j]|orb == cb, looked at pairBlock positions at a time; when none is
// found in the whole blocks it returns -k-1, k being the first position it
// did not look at. p[:n] and q[:n] must be readable.
//
//go:noescape
func pairIndexVector(p, q *byte, n int, ora, ca, orb, cb byte) int
