//go:build !amd64

package rewrite

// havePairVector: no vector loop on this architecture; foldFinder searches
// by IndexByte.
var havePairVector = false

const pairBlock = 1 << 62

func pairIndexVector(p, q *byte, n int, ora, ca, orb, cb byte) int { return -1 }
