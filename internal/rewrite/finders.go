package rewrite

// The searches behind the text rules (text.go): each finds the next place
// where the origin's name may start, by its rarest byte, a pair of bytes,
// or a word-at-a-time compare, so that the rules look closely only there.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// byteRarity ranks the bytes of host names by how seldom the name search
// meets them, rarest last: foldFinder looks for a host by its rarest byte
// (and, with pairFind, the next rarest too), so that a long script costs
// few false candidates ("w" of "www." is in every "window"). The order is their count in the script and style text of the
// 65 corpus pages, both letter cases of a letter together and 7,000 added
// for the second IndexByte pass a letter costs (about what one pass over
// that text costs in candidates). In that text, '/' (28,612) is rarer than
// every letter but 'j', 'q' and 'z'; '.' (98,095) is rarer than 'u' or 'p'.
var byteRarity = func() (r [256]uint8) {
	for i, c := range []byte("etaniorlsmd-cp:u0g.2hyfb14w35v89x7k_6zjq[]") {
		r[c] = uint8(10 + i)
		if c >= 'a' && c <= 'z' {
			r[c-('a'-'A')] = uint8(10 + i)
		}
	}
	return r
}()

// rarestByte is the offset in name of its rarest byte (byteRarity).
func rarestByte(name []byte) int {
	best := 0
	for i, c := range name {
		if byteRarity[c] > byteRarity[name[best]] {
			best = i
		}
	}
	return best
}

// hostFinder finds the next place the host name begins in a text, right
// after pre (lower case, "" for anywhere). With a vector unit it is the
// name search (foldFinder) with pre checked at each name it finds: that
// search stops about only at the name. Without one, a name after a
// prefix is found by the prefix's first byte (slashFinder), which has no
// letter case and is rarer than most of a name's bytes. The fields are
// concrete types, so that it costs no allocation.
type hostFinder struct {
	slash bool
	sf    slashFinder
	// sb finds the name after a '\\' where pre is "/": a backslash is a
	// slash to the URL parser (authority.go). nextS and nextB are the next
	// answers of sf and sb, -2 when not asked yet.
	sb           slashFinder
	nextS, nextB int
	ff           foldFinder
	pre          string
	// listed: the names in the text are known (listHostFinder): at holds
	// where each begins, in order, and s is the text.
	listed bool
	at     []int
	s      []byte
}

// listHostFinder is hostFinder for a text s whose names begin at the
// offsets at, in order: those the read buffer's search found (nameAt).
func listHostFinder(s []byte, at []int, pre string) hostFinder {
	return hostFinder{listed: true, at: at, s: s, pre: pre}
}

func newHostFinder(s, name []byte, rare int, pre string) hostFinder {
	return newHostFinderPair(s, name, rare, newPairFind(name, rare), pre)
}

// newHostFinderPair is newHostFinder with the name's pairFind made already
// (hostRewriter.pair): most values and regions searched are short, and
// picking the pair would cost more than searching them.
func newHostFinderPair(s, name []byte, rare int, pair pairFind, pre string) hostFinder {
	if pre != "" && !havePairVector {
		f := hostFinder{slash: true, sf: newPrefixFinder(s, name, pre), nextS: -2, nextB: -1}
		if pre == "/" {
			f.sb, f.nextB = newPrefixFinder(s, name, `\`), -2
		}
		return f
	}
	return hostFinder{ff: newFoldFinderPair(s, name, rare, pair), pre: pre}
}

func (f *hostFinder) find(from int) int {
	if f.slash {
		return f.findSlash(from)
	}
	if f.listed {
		for ; len(f.at) > 0; f.at = f.at[1:] {
			if at := f.at[0]; at >= from && endsWithPre(f.s[:at], f.pre) {
				return at
			}
		}
		return -1
	}
	for {
		at := f.ff.find(from)
		if at < 0 || endsWithPre(f.ff.s[:at], f.pre) {
			return at
		}
		from = at + 1
	}
}

// findSlash is find by the prefix finders: the first name after either.
func (f *hostFinder) findSlash(from int) int {
	if f.nextS == -2 || f.nextS >= 0 && f.nextS < from {
		f.nextS = f.sf.find(from)
	}
	if f.nextB == -2 || f.nextB >= 0 && f.nextB < from {
		f.nextB = f.sb.find(from)
	}
	switch {
	case f.nextS < 0:
		return f.nextB
	case f.nextB < 0:
		return f.nextS
	}
	return min(f.nextS, f.nextB)
}

// endsWithPre reports whether s ends with pre, compared as endsWithFold
// does but for a '/' of pre, which a '\\' matches too.
func endsWithPre(s []byte, pre string) bool {
	if len(s) < len(pre) {
		return false
	}
	s = s[len(s)-len(pre):]
	for i := 0; i < len(pre); i++ {
		if c := lower(s[i]); c != pre[i] && !(pre[i] == '/' && c == '\\') {
			return false
		}
	}
	return true
}

// slashFinder finds the host name only right after a '/': every form of
// kindContent ("https://", "//", "\/\/"...) ends with one. '/' has no
// letter case and is among the rarest bytes of scripts and styles, so one
// IndexByte pass over the text finds every candidate; a search for the
// name's first byte would need a pass per letter case and meet it far more
// often. What a '/' costs is the IndexByte call it ends, and in URLs they
// come in runs ("https://a/b/c", "\/\/"): from a '/' on, slashFinder reads
// eight bytes at a time, checking every '/' in them against the name's
// first byte (case-folded) at once, until a word holds no '/'.
// newPrefixFinder is the same search after other bytes.
type slashFinder struct {
	s, sub []byte
	// pre is what comes right before the name: its first byte, which has
	// no letter case and is the one IndexByte looks for, then lower-case
	// bytes compared case-folded. At most maxPre bytes.
	pre string
}

// maxPre is the longest pre of a slashFinder.
const maxPre = 2

func newSlashFinder(s, sub []byte) slashFinder { return newPrefixFinder(s, sub, "/") }

// newPrefixFinder finds sub, in any letter case, right after pre (see
// slashFinder.pre).
func newPrefixFinder(s, sub []byte, pre string) slashFinder {
	return slashFinder{s: s, sub: sub, pre: pre}
}

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// zeroBytes has the high bit set in exactly the bytes of x that are 0.
func zeroBytes(x uint64) uint64 {
	const lows = ^uint64(swarHighs)
	return ^((x&lows + lows) | x | lows)
}

// foldWord is what to OR into a word so that its bytes equal c's in eight
// copies where they are c in either letter case, and c in eight copies.
func foldWord(c byte) (or, want uint64) {
	if c >= 'a' && c <= 'z' {
		return 0x20 * swarOnes, uint64(c) * swarOnes
	}
	return 0, uint64(c) * swarOnes
}

// find is the first match beginning at or after from, or -1.
func (f *slashFinder) find(from int) int {
	s, sub, pre := f.s, f.sub, f.pre
	n, k := len(sub), len(pre)
	// A match at i has pre at i-k and ends at i+n <= len(s): every such
	// pre starts in s[:end].
	end := len(s) - n - k + 1
	lead := uint64(pre[0]) * swarOnes
	var or, want [maxPre]uint64 // for pre[1:] and sub[0], at offsets 1..k
	for t := 1; t <= k; t++ {
		c := sub[0]
		if t < k {
			c = pre[t]
		}
		or[t-1], want[t-1] = foldWord(c)
	}
	j := max(from-k, 0)
	for j < end {
		q := bytes.IndexByte(s[j:end], pre[0])
		if q < 0 {
			return -1
		}
		j += q
		// s[j:j+8] holds a lead byte; s[j+t:j+t+8] the bytes t after each.
		for ; j+8+k <= len(s); j += 8 {
			m := zeroBytes(binary.LittleEndian.Uint64(s[j:]) ^ lead)
			if m == 0 {
				break // no lead byte in this word: back to IndexByte
			}
			for t := 1; t <= k; t++ {
				m &= zeroBytes((binary.LittleEndian.Uint64(s[j+t:]) | or[t-1]) ^ want[t-1])
			}
			for ; m != 0; m &= m - 1 {
				p := j + bits.TrailingZeros64(m)/8
				if p >= end {
					return -1
				}
				if equalFoldLower(s[p+k:p+k+n], sub) {
					return p + k
				}
			}
		}
		if j+8+k > len(s) { // fewer bytes left than the words need: byte by byte
			for ; j < end; j++ {
				if s[j] == pre[0] && restFold(s[j:], pre) && equalFoldLower(s[j+k:j+k+n], sub) {
					return j + k
				}
			}
			return -1
		}
	}
	return -1
}

// restFold reports whether s continues with pre[1:], case-folded.
func restFold(s []byte, pre string) bool {
	for t := 1; t < len(pre); t++ {
		if lower(s[t]) != pre[t] {
			return false
		}
	}
	return true
}

// foldFinder finds the lower-case ASCII sub in s in any letter case, from
// left to right. With a vector unit it looks for two of sub's bytes at once
// (pairFind); otherwise for candidates for its byte at r (rarestByte) by
// IndexByte, keeping the next position of each letter case between calls,
// so that s is scanned once per case however many candidates fail.
type foldFinder struct {
	s, sub         []byte
	r              int
	lo, up         byte
	nextLo, nextUp int // -1: none left; otherwise, when below from, stale
	pair           pairFind
}

func newFoldFinder(s, sub []byte, r int) foldFinder {
	return newFoldFinderPair(s, sub, r, newPairFind(sub, r))
}

// newFoldFinderPair is newFoldFinder with sub's pairFind made already.
func newFoldFinderPair(s, sub []byte, r int, pair pairFind) foldFinder {
	lo := sub[r]
	up := lo
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	f := foldFinder{s: s, sub: sub, r: r, lo: lo, up: up, nextLo: -1, nextUp: -1}
	if len(s) >= len(sub) {
		f.nextLo, f.nextUp = 0, 0
		if up == lo {
			f.nextUp = -1
		}
		f.pair = pair
		f.pair.disabled = !havePairVector
	}
	return f
}

// find is the first match at or after from, or -1.
func (f *foldFinder) find(from int) int {
	if f.nextLo < 0 && f.nextUp < 0 {
		return -1
	}
	if !f.pair.disabled {
		return f.findPair(from)
	}
	// window[i] is the byte at r of a match that begins at i.
	window := f.s[f.r : len(f.s)-len(f.sub)+f.r+1]
	for {
		if f.nextLo >= 0 && f.nextLo < from {
			f.nextLo = nextIndex(window, from, f.lo)
		}
		if f.nextUp >= 0 && f.nextUp < from {
			f.nextUp = nextIndex(window, from, f.up)
		}
		i := f.nextLo
		if i < 0 || (f.nextUp >= 0 && f.nextUp < i) {
			i = f.nextUp
		}
		if i < 0 {
			return -1
		}
		if equalFoldLower(f.s[i:i+len(f.sub)], f.sub) {
			return i
		}
		from = i + 1
	}
}

// findPair is find by pairFind. The next candidate is kept, as find keeps
// its IndexByte positions, for callers that ask again from before it.
func (f *foldFinder) findPair(from int) int {
	n := len(f.s) - len(f.sub) + 1 // where a match can begin
	if f.nextLo > from {
		from = f.nextLo // nothing matched between the last from and it
	}
	for {
		i := f.pair.index(f.s, from, n)
		if i < 0 {
			f.nextLo, f.nextUp = -1, -1 // none left: find answers at once from now on
			return -1
		}
		if equalFoldLower(f.s[i:i+len(f.sub)], f.sub) {
			f.nextLo = i
			return i
		}
		from = i + 1
	}
}
