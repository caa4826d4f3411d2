package rewrite

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// withPairVector runs f with foldFinder's vector search on and off (off is
// the IndexByte search of machines without AVX2).
func withPairVector(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := havePairVector
	defer func() { havePairVector = saved }()
	for _, on := range []bool{true, false} {
		if on && !saved {
			continue // no vector unit here: only the fallback can run
		}
		havePairVector = on
		t.Run(map[bool]string{true: "vector", false: "indexbyte"}[on], f)
	}
}

// TestFoldFinderLongTexts: the name, in mixed letter case, with near
// misses (one byte of the two the vector search compares right, the other
// wrong) placed on each side of the 32- and 64-byte steps of the vector
// loop and in its scalar tail, is found where a plain search finds it.
func TestFoldFinderLongTexts(t *testing.T) {
	withPairVector(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, name := range []string{"origin.pub.example", "www.nytimes.com", "b", "[::1]", "ab"} {
			p := newPairFind([]byte(name), rarestByte([]byte(name)))
			miss := []byte(name)
			miss[p.b] ^= 0x01 // the second byte wrong: a near miss
			for _, size := range []int{31, 32, 33, 63, 64, 65, 95, 96, 97, 200, 1000} {
				for range 20 {
					s := []byte(strings.Repeat("x", size))
					for k := rng.IntN(4); k > 0; k-- {
						at := rng.IntN(size)
						w := []byte(name)
						if rng.IntN(2) == 0 {
							w = miss
						}
						for i := range w {
							if rng.IntN(2) == 0 {
								w[i] = upper(w[i])
							}
						}
						copy(s[at:], w)
					}
					checkFoldFinder(t, string(s), name)
				}
			}
		}
	})
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// checkFoldFinder compares foldFinder with foldFindRef from every start,
// one finder asked in increasing order (as nameIn asks) and a new one per
// start.
func checkFoldFinder(t *testing.T, s, name string) {
	t.Helper()
	kept := newFoldFinder([]byte(s), []byte(name), rarestByte([]byte(name)))
	for from := 0; from <= len(s); from++ {
		want := foldFindRef(s, name, from)
		if got := kept.find(from); got != want {
			t.Fatalf("%q in %q, from %d (kept finder): %d, want %d", name, s, from, got, want)
		}
		fresh := newFoldFinder([]byte(s), []byte(name), rarestByte([]byte(name)))
		if got := fresh.find(from); got != want {
			t.Fatalf("%q in %q, from %d: %d, want %d", name, s, from, got, want)
		}
	}
}

// TestPairIndexFindsBothLetterCases: the vector loop folds letters only;
// a byte that differs from a letter by the case bit alone but is no
// letter ('@' and '`' against 'G' and 'g') is no match there, and a
// non-letter byte of the name matches only itself.
func TestPairIndexFindsBothLetterCases(t *testing.T) {
	withPairVector(t, func(t *testing.T) {
		pad := strings.Repeat("-", 40)
		for _, c := range []struct{ s, name string }{
			{pad + "G." + pad, "g."}, {pad + "g." + pad, "g."}, {pad + "@." + pad, "g."},
			{pad + "`." + pad, "g."}, {pad + "g\x0e" + pad, "g."}, {pad + "[::1]" + pad, "[::1]"},
			{pad + "{::1}" + pad, "[::1]"},
		} {
			checkFoldFinder(t, c.s, c.name)
		}
	})
}

// hostFindRef is hostFinder.find written plainly: prefixFindRef, but
// after "/" a '\\' before the name counts as the '/', as the URL parser
// reads a backslash in a special URL (authority.go).
func hostFindRef(s, name, pre string, from int) int {
	if pre != "/" {
		return prefixFindRef(s, name, pre, from)
	}
	for i := max(from, 1); i+len(name) <= len(s); i++ {
		if (s[i-1] == '/' || s[i-1] == '\\') && asciiFoldEqual(s[i:i+len(name)], name) {
			return i
		}
	}
	return -1
}

// FuzzFoldFinder compares foldFinder, and hostFinder after "/" and "2f",
// with the vector and the IndexByte searches, with plain searches from
// every start.
func FuzzFoldFinder(f *testing.F) {
	f.Add(strings.Repeat("a", 70)+"ORIGIN.pub.example"+strings.Repeat("b", 40), "origin.pub.example")
	f.Add(strings.Repeat("wWw.", 30), "www.nytimes.com")
	f.Add(strings.Repeat("@`Gg", 20), "g")
	f.Add(strings.Repeat("x", 40)+`u=https%3A%2F%2FOrigin.pub.example%2F2f2F2f\/\/origin.pub.example`, "origin.pub.example")
	f.Fuzz(func(t *testing.T, s, name string) {
		name = strings.ToLower(name)
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r >= 0x80 }) {
			return
		}
		saved := havePairVector
		defer func() { havePairVector = saved }()
		for _, on := range []bool{saved, false} {
			havePairVector = on
			checkFoldFinder(t, s, name)
			for _, pre := range []string{"/", "2f"} {
				f := newHostFinder([]byte(s), []byte(name), rarestByte([]byte(name)), pre)
				for from := 0; from <= len(s); from++ {
					if got, want := f.find(from), hostFindRef(s, name, pre, from); got != want {
						t.Fatalf("vector %v: %q after %q in %q from %d: %d, want %d", on, name, pre, s, from, got, want)
					}
				}
			}
		}
	})
}
