package rewrite

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// The Flight differential (flight_fuzz_test.go) under the options that
// hold output: the charset hold, a small token limit, BodyEnd.

// flightVariant changes a generated page and its options: a small token
// limit, the charset hold (a head injection, no charset meta or a late
// one, no </head>, pushes before <head>), BodyEnd, and </body> between
// two pushes. either: a text row open at </body> may keep its bytes
// (bodyEnd lets the Flight hold go before the auction wait).
func flightVariant(rng *rand.Rand, page string) (_ string, _ *Options, either bool) {
	o := &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https", Inline: true}
	switch rng.Intn(4) {
	case 0:
		o.MaxTokenBytes = []int{48, 64, 100, 150, 200, 300, 500, 1000}[rng.Intn(8)]
	}
	if rng.Intn(2) == 0 {
		o.HeadPrepend = []byte("<!--HP-->")
	}
	if rng.Intn(2) == 0 {
		o.BodyEnd = func() []byte { return []byte("<!--BE-->") }
	}
	const head = "<!doctype html><html><head><title>t</title></head><body><p>a</p>"
	rest := strings.TrimPrefix(page, head)
	v := rng.Intn(4)
	switch v {
	case 1: // pushes inside the head, under the charset hold
		page = "<!doctype html><html><head><title>t</title>" + rest
	case 2: // a charset meta somewhere among the pushes
		cuts := strings.Split(rest, "</script>")
		k := rng.Intn(len(cuts))
		cuts[k] = "<meta charset=utf-8>" + cuts[k]
		page = "<!doctype html><html><head><title>t</title>" + strings.Join(cuts, "</script>")
	case 3: // pushes before the head, which comes between two of them
		cuts := strings.Split(rest, "</script>")
		k := rng.Intn(len(cuts))
		cuts[k] = "<head>" + cuts[k]
		page = "<!doctype html><html>" + strings.Join(cuts, "</script>")
	}
	if rng.Intn(3) == 0 { // </body> between two pushes
		cuts := strings.Split(page, "</script>")
		k := rng.Intn(len(cuts))
		cuts[k] = "</body>" + cuts[k]
		page = strings.Join(cuts, "</script>")
		either = o.BodyEnd != nil
	}
	return page, o, either
}

func rewriteFlightVariant(t *testing.T, page string, o *Options, seed int64) string {
	t.Helper()
	var out bytes.Buffer
	var r interface{ Read([]byte) (int, error) } = strings.NewReader(page)
	if seed >= 0 {
		r = &splitReader{s: page, rng: rand.New(rand.NewSource(seed))}
	}
	if _, err := Rewrite(&out, r, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// checkFlightVariant: the output does not depend on reads, the page
// outside its pushes is unchanged but for the injections, and every row
// reads back as generated with the request host (a kept row as it was;
// under a small token limit, some references may be kept).
func checkFlightVariant(t *testing.T, gen, reads int64) {
	rng := rand.New(rand.NewSource(gen))
	page, rows := genFlightPage(rng)
	page, o, either := flightVariant(rng, page)
	whole := rewriteFlightVariant(t, page, o, -1)
	if split := rewriteFlightVariant(t, page, o, reads); whole != split {
		t.Fatalf("gen %d: output depends on reads\npage  %q\nwhole %q\nsplit %q", gen, page, whole, split)
	}
	got := strings.NewReplacer("<!--HP-->", "", "<!--BE-->", "").Replace(whole)
	gotStream, gotRest := refFlightStream(t, got)
	if _, inRest := refFlightStream(t, page); gotRest != inRest {
		t.Fatalf("gen %d: the page outside its pushes changed:\n got %q\nwant %q", gen, gotRest, inRest)
	}
	gotRows := refRows(t, gotStream)
	if len(gotRows) != len(rows) {
		t.Fatalf("gen %d: %d rows, want %d\npage %q\nout  %q", gen, len(gotRows), len(rows), page, got)
	}
	for i, r := range rows {
		want := r.content
		if !r.keep {
			want = refRewrite(r.content)
		}
		g := gotRows[i]
		if g.tag == r.tag && (g.content == want || either && r.tag == 'T' && g.content == r.content) {
			continue
		}
		// Under a small token limit a push or a hold past it keeps its
		// bytes, so a row may keep some of its references: it must then
		// differ from the generated one in nothing else.
		if o.MaxTokenBytes != 0 && g.tag == r.tag && refRewrite(g.content) == refRewrite(r.content) {
			continue
		}
		t.Fatalf("gen %d row %d: got %c %q\nwant %c %q\nmax %d\npage %q\nout  %q", gen, i, g.tag, g.content, r.tag, want, o.MaxTokenBytes, page, got)
	}
}

func TestFlightOptionsDifferential(t *testing.T) {
	for seed := range int64(3000) {
		checkFlightVariant(t, seed, seed%7)
	}
}

func FuzzFlightOptions(f *testing.F) {
	for _, s := range []int64{0, 1, 2, 3, 42} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, gen, reads int64) { checkFlightVariant(t, gen, reads) })
}
