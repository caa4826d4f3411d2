package rewrite

// pairFind is the candidate search of foldFinder where the CPU has vector
// compares (pairfind_amd64.s): a host name is looked for by two of its
// bytes at once, its rarest and the next rarest at their offsets, each in
// either letter case. One IndexByte pass per letter case of one byte stops
// at every "g" of a script; two bytes at a fixed distance almost never
// meet by chance, so the search stops about only where the name is. This
// is the "generic SIMD" substring search (Wojciech Muła, "SIMD-friendly
// algorithms for substring searching", 2016), folded for ASCII case.

// pairFind is the search for one name: offsets a and b of the two bytes in
// the name, and for each what to OR into a text byte (0x20 for a letter,
// so that both letter cases fold to the lower) and the lower-case byte
// that must result.
type pairFind struct {
	a, b     int
	ora, ca  byte
	orb, cb  byte
	disabled bool // no vector unit: foldFinder searches by IndexByte
}

// newPairFind picks the two bytes of the lower-case name. A one-byte name
// uses its byte twice.
func newPairFind(name []byte, rare int) pairFind {
	second := -1
	for i, c := range name {
		if i != rare && (second < 0 || byteRarity[c] > byteRarity[name[second]]) {
			second = i
		}
	}
	if second < 0 {
		second = rare
	}
	a, b := min(rare, second), max(rare, second)
	p := pairFind{a: a, b: b, disabled: !havePairVector}
	p.ora, p.ca = foldByte(name[a])
	p.orb, p.cb = foldByte(name[b])
	return p
}

func foldByte(c byte) (or, want byte) {
	if c >= 'a' && c <= 'z' {
		return 0x20, c
	}
	return 0, c
}

// index is the first i in [from, n) where s[i+a] and s[i+b] fold to the
// two bytes, or -1. The caller guarantees i+b < len(s) for every i < n.
func (p *pairFind) index(s []byte, from, n int) int {
	if from >= n {
		return -1
	}
	i := from
	if n-from >= pairBlock {
		j := pairIndexVector(&s[from+p.a], &s[from+p.b], n-from, p.ora, p.ca, p.orb, p.cb)
		if j >= 0 {
			return from + j
		}
		i = from + (-j - 1) // the first position the vector loop did not cover
	}
	for ; i < n; i++ {
		if s[i+p.a]|p.ora == p.ca && s[i+p.b]|p.orb == p.cb {
			return i
		}
	}
	return -1
}
