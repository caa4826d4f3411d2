package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/ssatd/ssatd/internal/ssat"

	"github.com/ssatd/ssatd/internal/testutil"
)

// headFor is the head injection of an eligible page with n slots (the
// bundle tag alone for n = 0, as for a page that is not eligible).
func headFor(t testing.TB, n int) []byte {
	t.Helper()
	head := BundleTag(strings.Repeat("0123456789abcdef", 4))
	if n == 0 {
		return head
	}
	var slots []ssat.Slot
	for i := range n {
		slots = append(slots, ssat.Slot{ID: fmt.Sprintf("slot-%d", i), DivID: fmt.Sprintf("div-gpt-ad-slot-%d", i),
			GAMUnitPath: "/1234567/site/section/slot", Formats: [][]int{{300, 250}, {728, 90}}})
	}
	s, err := AdSlotsScript(slots)
	if err != nil {
		t.Fatal(err)
	}
	return append(s, head...)
}

// prescan is the encoding that DetermineEncoding's prescan of b's charset
// declaration finds ("windows-1252" when there is none). Bytes at or above
// 0x80 are masked first, so that its other step, guessing UTF-8 from valid
// non-ASCII bytes, cannot answer: that is no declaration, and an injection
// before the page's first non-ASCII byte changes its guess on a page that
// declares nothing.
func prescan(b []byte) string {
	b = bytes.Clone(b[:min(len(b), 1024)])
	for i, c := range b {
		if c >= 0x80 {
			b[i] = '?'
		}
	}
	_, name, _ := charset.DetermineEncoding(b, "")
	return name
}

// Regression (issue 18, "the head injection can push <meta charset> out of
// the prescan window"): with six slots a page's <meta charset="utf-8"> at
// byte 27 ended up at byte 1159, and the prescan of the output found
// windows-1252.
func TestHeadInjectionKeepsCharsetInPrescanWindow(t *testing.T) {
	const body = "<title>Café</title></head><body><p>Crème brûlée</p></body></html>"
	for _, tt := range []struct {
		name, meta string
	}{
		{"meta charset", `<meta charset="utf-8">`},
		{"http-equiv", `<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=utf-8">`},
		{"after other tags", `<link rel=preconnect href="https://cdn.example"><meta name=viewport content="width=device-width"><meta charset=utf-8>`},
	} {
		for _, slots := range []int{0, 1, 6, 32} {
			t.Run(fmt.Sprintf("%s/%d slots", tt.name, slots), func(t *testing.T) {
				in := "<!DOCTYPE html><html><head>" + tt.meta + body
				head := headFor(t, slots)
				o := &Options{HeadPrepend: head}
				out, _ := run(t, in, o)
				if got, want := prescan([]byte(out)), prescan([]byte(in)); got != want || want != "utf-8" {
					t.Fatalf("prescan of the output %s, of the input %s", got, want)
				}
				// The injection is right after <head>, or right after the
				// declaration when it would not fit before it.
				atHead := "<!DOCTYPE html><html><head>" + string(head) + tt.meta + body
				afterMeta := "<!DOCTYPE html><html><head>" + tt.meta + string(head) + body
				want := atHead
				if strings.Index(atHead, tt.meta)+len(tt.meta) > 1024 {
					want = afterMeta
				}
				if out != want {
					t.Fatalf("got  %q\nwant %q", out, want)
				}
				var split strings.Builder
				if _, err := Rewrite(&split, &randomChunks{s: in, rng: newRand(int64(slots)), max: 7}, o); err != nil || split.String() != out {
					t.Fatalf("split reads give a different output (%v)", err)
				}
			})
		}
	}
}

// Without a declaration in the first 1024 bytes the injection stays right
// after <head>, also when the page ends or </body> comes first.
func TestHeadInjectionWithoutCharsetStaysAfterHead(t *testing.T) {
	head := headFor(t, 8)
	for _, in := range []string{
		"<html><head><title>t</title></head><body></body></html>",
		"<html><head><title>" + strings.Repeat("x", 2000) + "</title><meta charset=utf-8></head>",
		"<html><head>",
		"<html><head><meta name=x content=charset></head><body></body>",
	} {
		o := &Options{HeadPrepend: head, BodyEnd: func() []byte { return []byte("[BIDS]") }}
		out, _ := run(t, in, o)
		if i := strings.Index(in, "<head>") + len("<head>"); !strings.HasPrefix(out, in[:i]+string(head)) {
			t.Errorf("injection not right after <head> in %.60q:\n%.200q", in, out)
		}
	}
}

// For every corpus page and 0, 1, 8 and 32 slots, the encoding prescan
// (golang.org/x/net/html/charset) of the output is that of the input.
func TestCorpusCharsetPrescanUnchanged(t *testing.T) {
	files := testutil.RequireCorpus(t)
	declared := 0
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		host := "absent.invalid"
		if m := canonicalHost.FindSubmatch(page); m != nil {
			host = string(m[1])
		}
		want := prescan(page)
		if want != "windows-1252" {
			declared++
		}
		for _, n := range []int{0, 1, 8, 32} {
			var out bytes.Buffer
			o := &Options{OriginHost: host, RequestHost: "www.pub.example", RequestScheme: "https",
				HeadPrepend: headFor(t, n), BodyEnd: func() []byte { return []byte("<script>BIDS</script>") }}
			if _, err := Rewrite(&out, bytes.NewReader(page), o); err != nil {
				t.Fatal(err)
			}
			if got := prescan(out.Bytes()); got != want {
				t.Errorf("%s, %d slots: prescan of the output %s, of the input %s", filepath.Base(f), n, got, want)
			}
		}
	}
	if declared < len(files)/2 {
		t.Fatalf("only %d of %d corpus pages declare a charset in their first 1024 bytes: the test proves little", declared, len(files))
	}
}

// gatedReader returns first, then blocks its next Read until open is
// closed, then returns rest.
type gatedReader struct {
	first, rest string
	open        chan struct{}
	step        int
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.step++
	switch g.step {
	case 1:
		return copy(p, g.first), nil
	case 2:
		<-g.open
		return copy(p, g.rest), nil
	}
	return 0, io.EOF
}

// signalWriter closes seen once what it received contains want.
type signalWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// Regression (found by TestFirstBytesBeforeOriginFinishes in
// internal/proxy): holding the output after <head> for a charset
// declaration must not hold what the origin has sent while the rewriter
// waits for more: a head that has ended is written before the next read.
func TestHeldHeadReleasedBeforeWaitingForInput(t *testing.T) {
	for _, first := range []string{
		"<html><head><title>x</title></head><body><p>first part</p>",
		"<html><head><title>x</title><body><p>first part</p>",
	} {
		src := &gatedReader{first: first, rest: "<p>second part</p></body></html>", open: make(chan struct{})}
		dst := &signalWriter{want: "first part</p>", seen: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, err := Rewrite(dst, src, &Options{HeadPrepend: headFor(t, 8)})
			done <- err
		}()
		select {
		case <-dst.seen:
		case <-time.After(10 * time.Second):
			close(src.open)
			t.Fatalf("%q: the first part was not written before the next read", first)
		}
		close(src.open)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if out := dst.b.String(); !strings.HasPrefix(out, "<html><head>"+string(headFor(t, 8))+"<title>x</title>") {
			t.Errorf("injection not after <head>: %.120q", out)
		}
	}
}
