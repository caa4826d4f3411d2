package rewrite

import "bytes"

// asciiLower returns s with ASCII letters lower-cased, and s itself when it
// has none, so values that are already lower case cost no allocation. Only
// ASCII is folded: host names in URLs are ASCII (IDNs travel as punycode),
// and folding keeps every byte offset of s valid in the result.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !isUpper(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if isUpper(b[i]) {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// containsFold reports whether s contains the lower-case ASCII sub in any
// letter case, without allocating.
func containsFold(s, sub []byte) bool { return indexFold(s, sub) >= 0 }

// indexFold is the index of the first match of the lower-case ASCII sub in
// s in any letter case, or -1. It is the quick test run on every start
// tag, so it finds candidates for sub's first byte with IndexByte, keeping
// the next position of each letter case so that s is scanned once per case
// however the two cases interleave.
func indexFold(s, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	if len(s) < len(sub) {
		return -1
	}
	starts := s[:len(s)-len(sub)+1] // where a match can begin
	lo, up := sub[0], sub[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	nextLo, nextUp := nextIndex(starts, 0, lo), -1
	if up != lo {
		nextUp = nextIndex(starts, 0, up)
	}
	for nextLo >= 0 || nextUp >= 0 {
		i := nextLo
		if i < 0 || (nextUp >= 0 && nextUp < i) {
			i = nextUp
		}
		if equalFoldLower(s[i:i+len(sub)], sub) {
			return i
		}
		if i == nextLo {
			nextLo = nextIndex(starts, i+1, lo)
		} else {
			nextUp = nextIndex(starts, i+1, up)
		}
	}
	return -1
}

// nextIndex is the index of the first c in s at or after from, or -1.
func nextIndex(s []byte, from int, c byte) int {
	if from >= len(s) {
		return -1
	}
	if j := bytes.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// equalFoldLower reports whether s equals the lower-case lowerSub when
// ASCII letters of s are lower-cased.
func equalFoldLower(s, lowerSub []byte) bool {
	for i := range lowerSub {
		if lower(s[i]) != lowerSub[i] {
			return false
		}
	}
	return true
}
