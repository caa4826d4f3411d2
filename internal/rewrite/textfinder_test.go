package rewrite

import (
	"bytes"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

// slashFindRef is slashFinder.find written plainly: the first i >= from
// with a '/' at i-1 and name at i in any ASCII letter case, or -1.
func slashFindRef(s, name string, from int) int { return prefixFindRef(s, name, "/", from) }

// prefixFindRef is the same after pre: its first byte as it is, the rest
// in any letter case.
func prefixFindRef(s, name, pre string, from int) int {
	k := len(pre)
	for i := max(from, k); i+len(name) <= len(s); i++ {
		if s[i-k] == pre[0] && asciiFoldEqual(s[i-k+1:i], pre[1:]) && asciiFoldEqual(s[i:i+len(name)], name) {
			return i
		}
	}
	return -1
}

// asciiFoldEqual compares a and b with ASCII letters folded.
func asciiFoldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// slashFindAll is every match of f, each search starting one byte after
// the previous match, as textRun's callers never need but a finder that
// skipped a candidate would show.
func slashFindAll(s, name string) []int {
	f := newSlashFinder([]byte(s), []byte(name))
	var at []int
	for i := 0; ; {
		j := f.find(i)
		if j < 0 {
			return at
		}
		at = append(at, j)
		i = j + 1
	}
}

func slashFindAllRef(s, name string) []int {
	var at []int
	for i := 0; ; {
		j := slashFindRef(s, name, i)
		if j < 0 {
			return at
		}
		at = append(at, j)
		i = j + 1
	}
}

func TestSlashFinderCases(t *testing.T) {
	const o = "origin.pub.example"
	tests := []struct {
		name, s, host string
		want          []int
	}{
		{"scheme", "https://origin.pub.example/", o, []int{8}},
		{"upper case, host ends the buffer", "u=HTTPS://ORIGIN.PUB.EXAMPLE", o, []int{10}},
		{"mixed case first byte", "//Origin.pub.example //oRIGIN.pub.example", o, []int{2, 23}},
		{"buffer starts with the slash", "/origin.pub.example", o, []int{1}},
		{"json escaped", `{"u":"https:\/\/origin.pub.example\/a"}`, o, []int{16}},
		{"protocol relative, escaped", `'\/\/origin.pub.example'`, o, []int{5}},
		{"run of slashes", "//////origin.pub.example", o, []int{6}},
		{"bare host is no slash form", "origin.pub.example x origin.pub.example", o, nil},
		{"host after other bytes is not after a slash", `/x.origin.pub.example a\origin.pub.example`, o, nil},
		{"cut by the buffer end", "https://origin.pub.exampl", o, nil},
		{"slashes in the last bytes", "//////////origin.pub.exampl/", o, nil},
		{"longer name still matches the name", "//origin.pub.example.evil", o, []int{2}},
		{"digit first: no case to fold", "//1X.EXAMPLE /\x11x.example", "1x.example", []int{2}},
		{"letter first: only its two cases", "/\x0frigin.pub.example /Origin.pub.example", o, []int{21}},
		{"one-byte name", "a/b/B/c", "b", []int{2, 4}},
		{"name as long as the buffer", "origin.pub.example", o, nil},
		{"empty", "", o, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := slashFindAll(tc.s, tc.host)
			if !equalInts(got, tc.want) {
				t.Errorf("find: %v, want %v", got, tc.want)
			}
			if ref := slashFindAllRef(tc.s, tc.host); !equalInts(ref, tc.want) {
				t.Errorf("reference disagrees with the table: %v", ref)
			}
		})
	}
}

// TestSlashFinderEveryOffset puts a match at every offset of the eight-byte
// words slashFinder reads, after runs of slashes and other bytes, with the
// buffer ending right after the name or a few bytes later.
func TestSlashFinderEveryOffset(t *testing.T) {
	const o = "origin.pub.example"
	for _, fill := range []string{"x", "/", `\/`, "/x", "//x"} {
		for pad := 0; pad < 24; pad++ {
			for _, form := range []string{"//" + o, "https://" + strings.ToUpper(o), `\/\/Origin.pub.example`, "/" + o[:len(o)-1]} {
				for _, tail := range []string{"", "/", "/a/b/c/d/e/f/g", "xxxxxxxx"} {
					s := strings.Repeat(fill, pad) + form + tail
					for from := 0; from <= len(s); from += 1 + len(s)/7 {
						f := newSlashFinder([]byte(s), []byte(o))
						if got, want := f.find(from), slashFindRef(s, o, from); got != want {
							t.Fatalf("%q from %d: %d, want %d", s, from, got, want)
						}
					}
					if got, want := slashFindAll(s, o), slashFindAllRef(s, o); !equalInts(got, want) {
						t.Fatalf("%q: %v, want %v", s, got, want)
					}
				}
			}
		}
	}
}

// TestPrefixFinderAfter2F: after "2f" (the escaped forms' separators end
// with it), with the 'f' and the name in either letter case, at every
// offset of the words read, and not after a '2' alone or an "f" alone.
func TestPrefixFinderAfter2F(t *testing.T) {
	const o = "origin.pub.example"
	for _, fill := range []string{"x", "2", "%2", "2f", "%2F%2"} {
		for pad := 0; pad < 20; pad++ {
			for _, form := range []string{"%2F%2F" + o, "%252f%252f" + strings.ToUpper(o), `\u002F\u002FOrigin.pub.example`, "2" + o, "f" + o, "%2F" + o[:len(o)-1]} {
				for _, tail := range []string{"", "%2F", "xxxxxxxxx"} {
					s := strings.Repeat(fill, pad) + form + tail
					for from := 0; from <= len(s); from++ {
						f := newPrefixFinder([]byte(s), []byte(o), "2f")
						if got, want := f.find(from), prefixFindRef(s, o, "2f", from); got != want {
							t.Fatalf("%q from %d: %d, want %d", s, from, got, want)
						}
					}
				}
			}
		}
	}
}

// FuzzSlashFinder compares slashFinder with slashFindRef, and the finder
// after "2f" with prefixFindRef, from every start.
func FuzzSlashFinder(f *testing.F) {
	f.Add("https://origin.pub.example/", "origin.pub.example")
	f.Add(`a\/\/ORIGIN.pub.example\/b//origin.pub.example`, "origin.pub.example")
	f.Add("/////////b/B/", "b")
	f.Add("u=https%3A%2F%2FOrigin.pub.example%2F2f2F2f", "origin.pub.example")
	f.Fuzz(func(t *testing.T, s, name string) {
		name = strings.ToLower(name)
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r >= 0x80 }) {
			return
		}
		fd := newSlashFinder([]byte(s), []byte(name))
		fe := newPrefixFinder([]byte(s), []byte(name), "2f")
		for from := 0; from <= len(s); from++ {
			if got, want := fd.find(from), slashFindRef(s, name, from); got != want {
				t.Fatalf("%q in %q from %d: %d, want %d", name, s, from, got, want)
			}
			if got, want := fe.find(from), prefixFindRef(s, name, "2f", from); got != want {
				t.Fatalf("after 2f: %q in %q from %d: %d, want %d", name, s, from, got, want)
			}
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// foldFindRef is foldFinder.find written plainly: the first i >= from with
// name at i in any ASCII letter case, or -1.
func foldFindRef(s, name string, from int) int {
	for i := from; i+len(name) <= len(s); i++ {
		if asciiFoldEqual(s[i:i+len(name)], name) {
			return i
		}
	}
	return -1
}

// TestFoldFinderEveryAnchor: whichever byte of the name rarestByte picks,
// foldFinder finds the matches a plain search finds, in either letter case
// of that byte, next to near misses and at the buffer's ends.
func TestFoldFinderEveryAnchor(t *testing.T) {
	for _, name := range []string{"origin.pub.example", "q1-z.example", "b"} {
		for _, s := range []string{
			name, strings.ToUpper(name), "x" + name + "y" + strings.ToUpper(name[:1]) + name[1:],
			strings.Repeat(name[:len(name)-1]+" ", 3) + name, name[:len(name)-1],
			"\x01" + strings.ToUpper(name) + "\x01" + name + name, "",
		} {
			for r := range len(name) {
				for from := 0; from <= len(s); from++ {
					f := newFoldFinder([]byte(s), []byte(name), r)
					if got, want := f.find(from), foldFindRef(s, name, from); got != want {
						t.Fatalf("%q in %q, byte %d, from %d: %d, want %d", name, s, r, from, got, want)
					}
				}
			}
		}
	}
}

// TestRarestByteIsTheRarestInScripts pins the choice on names whose bytes
// differ widely in the corpus's scripts (byteRarity): 'w' (58,538 in both
// cases) over the other letters of "www.nytimes.com", '.' over the letters
// of "medium.com", 'v' of "absent.invalid", ']' of an IPv6 literal. ']' of an IPv6 literal.
func TestRarestByteIsTheRarestInScripts(t *testing.T) {
	for name, want := range map[string]byte{"www.nytimes.com": 'w', "medium.com": '.', "absent.invalid": 'v', "[::1]": ']'} {
		if got := name[rarestByte([]byte(name))]; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// BenchmarkTextFinders runs the finders over the script and style text of
// the corpus pages, cut in read-sized chunks copied into one buffer as
// textRun sees them, with each page's canonical host (BENCHMARKS.md,
// "Inline text rules"). It reports each one's best thread CPU time per
// corpus, the copy included: "copy" is the copy alone; "nostop" one
// IndexByte pass for a byte the text does not hold; "indexbyte" one
// IndexByte pass stopping at every '/', the floor of a search that stops
// there; "pairs" a search per letter case for '/' and the name's first
// byte (bytes.Index), which stops at every '/' twice; "fold" the name
// search (two bytes at once on AVX2), "fold_indexbyte" the same search by
// IndexByte, as on machines without AVX2.
func BenchmarkTextFinders(b *testing.B) {
	raw := regexp.MustCompile(`(?is)<(script|style)\b[^>]*>(.*?)</(script|style)`)
	var chunks, hosts [][]byte
	for _, f := range testutil.RequireCorpus(b) {
		body, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		host := []byte("absent.invalid")
		if m := canonicalHost.FindSubmatch(body); m != nil {
			host = bytes.ToLower(m[1])
		}
		for _, m := range raw.FindAllSubmatch(body, -1) {
			for t := m[2]; len(t) > 0; t = t[min(len(t), readSize):] {
				chunks, hosts = append(chunks, t[:min(len(t), readSize)]), append(hosts, host)
			}
		}
	}
	all := func(find func(from int) int, n int) {
		for i := 0; ; {
			at := find(i)
			if at < 0 {
				return
			}
			i = at + n
		}
	}
	finders := []struct {
		name string
		run  func(s, host []byte)
	}{
		{"copy", func(_, _ []byte) {}},
		{"nostop", func(s, _ []byte) { bytes.IndexByte(s, 0) }},
		{"indexbyte", func(s, _ []byte) {
			for i := 0; ; i++ {
				j := bytes.IndexByte(s[i:], '/')
				if j < 0 {
					return
				}
				i += j
			}
		}},
		{"pairs", func(s, host []byte) {
			lo, up := [2]byte{'/', host[0]}, [2]byte{'/', host[0]}
			if c := host[0]; c >= 'a' && c <= 'z' {
				up[1] = c - ('a' - 'A')
			}
			s0 := s[:max(len(s)-len(host)+1, 0)] // the pair of every match that fits
			nextLo, nextUp := nextPair(s0, 0, lo), nextPair(s0, 0, up)
			if up == lo {
				nextUp = -1
			}
			all(func(from int) int {
				for {
					if nextLo >= 0 && nextLo < from-1 {
						nextLo = nextPair(s0, from-1, lo)
					}
					if nextUp >= 0 && nextUp < from-1 {
						nextUp = nextPair(s0, from-1, up)
					}
					i := nextLo
					if i < 0 || (nextUp >= 0 && nextUp < i) {
						i = nextUp
					}
					if i < 0 {
						return -1
					}
					if equalFoldLower(s[i+1:i+1+len(host)], host) {
						return i + 1
					}
					from = i + 2
				}
			}, len(host))
		}},
		{"slash", func(s, host []byte) { f := newSlashFinder(s, host); all(f.find, len(host)) }},
		{"fold", func(s, host []byte) { f := newFoldFinder(s, host, rarestByte(host)); all(f.find, len(host)) }},
		{"fold_indexbyte", func(s, host []byte) {
			saved := havePairVector
			havePairVector = false // the search of machines without AVX2
			f := newFoldFinder(s, host, rarestByte(host))
			havePairVector = saved
			all(f.find, len(host))
		}},
	}
	buf := make([]byte, readSize)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := make([]time.Duration, len(finders))
	for b.Loop() {
		for k, f := range finders {
			c := threadCPU()
			for i, s := range chunks {
				f.run(buf[:copy(buf, s)], hosts[i])
			}
			if d := threadCPU() - c; best[k] == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	for k, f := range finders {
		b.ReportMetric(float64(best[k])/1e3, f.name+"-cpu-us")
	}
}

// nextPair is the index of the first pair p in s at or after from, or -1:
// the search of "pairs" in BenchmarkTextFinders.
func nextPair(s []byte, from int, p [2]byte) int {
	from = max(from, 0)
	if from >= len(s) {
		return -1
	}
	if j := bytes.Index(s[from:], p[:]); j >= 0 {
		return from + j
	}
	return -1
}
