//go:build !amd64

package rewrite

// havePairVector: no vector loop on this architecture; foldFinder searches
// by IndexByte.
var havePairVector = false

// pairBlock and pairIndexVector stand in for the amd64 ones so that
// pairFind.index compiles; with havePairVector false it is never called.
const pairBlock = 1 << 62

func pairIndexVector(p, q *byte, n int, ora, ca, orb, cb byte) int { panic("no vector search here") }
