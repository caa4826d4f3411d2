package rewrite

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

const flO, flW = "https://origin.pub.example", "https://www.pub.example"

func flightTestOpts() *Options {
	return &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https", Inline: true}
}

func runFlightPage(t *testing.T, page string, o *Options, r io.Reader) string {
	t.Helper()
	var out bytes.Buffer
	if r == nil {
		r = strings.NewReader(page)
	}
	if _, err := Rewrite(&out, r, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A text row in a push past byte 1024 of a head with no charset
// declaration gets its new length however the page is read: the Flight
// hold ends the charset hold where the prescan window would.
func TestFlightCharsetHoldDoesNotDependOnReads(t *testing.T) {
	filler := "<title>" + strings.Repeat("t", 1000) + "</title>"
	page := "<html><head>" + filler + push(`1a:T29,{\"url\":\"`+flO+`/path\"}`) + "</head><body></body></html>"
	o := flightTestOpts()
	o.HeadPrepend = []byte("<script src=/x.js></script>")
	whole := runFlightPage(t, page, o, nil)
	small := runFlightPage(t, page, o, &fixedReader{s: page, n: 7})
	if whole != small {
		t.Fatalf("output depends on reads:\nwhole %q\nsmall %q", whole[len(whole)-200:], small[len(small)-200:])
	}
	if !strings.Contains(whole, push(`1a:T26,{\"url\":\"`+flW+`/path\"}`)) {
		t.Fatalf("the text row was not rewritten: %q", whole[len(whole)-200:])
	}
}

// A host cut by a push's end is carried whatever the token limit: the
// next push's ".evil" makes it another host, left as it is.
func TestFlightCutHostCarriedUnderAnyLimit(t *testing.T) {
	for _, max := range []int{0, 100, 150, 300} {
		page := "<html><body>" + push(`1:\"a `+flO) + "\n" + push(`.evil/\"\n`) + "</body></html>"
		o := flightTestOpts()
		o.MaxTokenBytes = max
		got := runFlightPage(t, page, o, nil)
		// The carry moves the cut reference whole into the next push; the
		// host is origin.pub.example.evil, left as it is.
		if strings.Contains(got, "www.pub.example") {
			t.Errorf("max %d:\n got %q", max, got)
		}
	}
}

// Under the charset hold, a host at a push's end is carried into the next
// push like anywhere else: ".evil" there makes it another host, left as
// it is, and "http:" then "//ORIGIN..." is one reference, rewritten whole.
func TestFlightCutHostUnderTheCharsetHold(t *testing.T) {
	o := flightTestOpts()
	o.HeadPrepend = []byte("<!--HP-->")
	for _, c := range []struct{ in, want string }{
		{push(`0:\"`+flO) + push(`.evil/\"\n`), push(`0:\"`) + push(flO+`.evil/\"\n`)},
		{push(`0:\"http:`) + push(`//ORIGIN.pub.example/\"\n`), push(`0:\"`) + push(`https://www.pub.example/\"\n`)},
	} {
		page := "<html><head>" + c.in + "<meta charset=utf-8></head><body></body></html>"
		want := "<html><head><!--HP-->" + c.want + "<meta charset=utf-8></head><body></body></html>"
		if got := runFlightPage(t, page, o, nil); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	}
}

// React 19's C row (a stream's end: "<id>:C\n" or "<id>:C<json>\n") and D
// row (debug info) end at a newline (ReactFlightClient.js, 19.1:
// processFullStringRow case 67, 68), where other versions have binary
// rows of these tags: without hex digits and a "," they are newline rows.
func TestFlightCRowIsNewlineRow(t *testing.T) {
	in := push(`1:C\n2:\"`+flO+`/a\"\n`) + push(`3:T1b,`+flO+`/`)
	want := push(`1:C\n2:\"`+flW+`/a\"\n`) + push(`3:T18,`+flW+`/`)
	page := "<html><body>" + in + "</body></html>"
	if got := runFlightPage(t, page, flightTestOpts(), nil); got != "<html><body>"+want+"</body></html>" {
		t.Errorf("page:\n got %q\nwant %q", got, "<html><body>"+want+"</body></html>")
	}
	var out bytes.Buffer
	o := &TextOptions{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https"}
	payload := "1:C\n2:\"" + flO + "/a\"\n3:D{\"name\":\"x\"}\n4:\"" + flO + "/b\"\n"
	if _, err := RewriteFlight(&out, strings.NewReader(payload), o); err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(payload, flO, flW); out.String() != want {
		t.Errorf("payload:\n got %q\nwant %q", out.String(), want)
	}
}

// BodyEnd's BeforeWait is called so that the page so far reaches the
// client while the auction waits: a text row open at </body> goes out as
// it came rather than hold the page back.
func TestFlightTextRowOpenAtBodyEndIsFlushed(t *testing.T) {
	var out bytes.Buffer
	var atWait string
	o := flightTestOpts()
	o.HeadPrepend = []byte("<!--HP-->")
	o.BeforeWait = func() error { atWait = out.String(); return nil }
	o.BodyEnd = func() []byte { return []byte("<!--BE-->") }
	page := "<html><head><meta charset=utf-8></head><body>" + push(`1:T40,<p>shell</p>`) + "<p>more</p></body></html>"
	if _, err := Rewrite(&out, strings.NewReader(page), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(atWait, "more") {
		t.Errorf("at BeforeWait the client has %q", atWait)
	}
}

type maxWriter struct {
	bytes.Buffer
	max int
}

func (w *maxWriter) Write(p []byte) (int, error) {
	w.max = max(w.max, len(p))
	return w.Buffer.Write(p)
}

// The Flight hold stays within MaxTokenBytes, a text row's own pieces
// included: no write is larger.
func TestFlightHoldWithinMaxTokenBytes(t *testing.T) {
	const max = 300
	x := strings.Repeat("x", 200)
	page := "<html><body>" + push(`1:T12c,`+x) + push(x[:100]) + "</body></html>"
	o := flightTestOpts()
	o.MaxTokenBytes = max
	var w maxWriter
	if _, err := Rewrite(&w, strings.NewReader(page), o); err != nil {
		t.Fatal(err)
	}
	if w.max > max {
		t.Errorf("one write of %d bytes, the hold's, over MaxTokenBytes %d", w.max, max)
	}
}
