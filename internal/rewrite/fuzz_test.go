package rewrite

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzSeeds are the seeds of FuzzRewrite, and of FuzzDifferential too.
var fuzzSeeds = []string{
	"", "<", "<html><head></head><body></body></html>",
	`<a href="https://origin.pub.example/a?x=1&amp;y=2">`,
	`<img srcset="origin.pub.example/a 1x, //origin.pub.example/b 2x">`,
	"<script>never closed", "<!-- unterminated", "<head><script>\"</body>\"</script></body>",
	strings.Repeat("<a></b>", 50), "<a\x00 href=\x00>", "<p a=/>", "<!DOCTYPE html><HEAD/>",
	"<title><a href=//origin.pub.example/></title>", "&#x2F;&#x2F;origin.pub.example",
	"<A href=00000//origin.puB.eXAmple#0>", `<img srcset="https://i0.wp.com/ORIGIN.pub.example/a.png?w=1650 1650w">`,
}

// FuzzRewrite checks, on arbitrary bytes and arbitrary chunk splits: no
// panic; the output does not depend on the split points; with nothing to
// rewrite (no origin host in any letter case, no character reference) and
// nothing injected the output is the input; an injection is the
// only difference otherwise.
func FuzzRewrite(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		o := &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https", MaxTokenBytes: 4096}
		var one bytes.Buffer
		if _, err := Rewrite(&one, bytes.NewReader(in), o); err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		var split bytes.Buffer
		if _, err := Rewrite(&split, &randomChunks{s: string(in), rng: newRand(int64(seed))}, o); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Bytes(), split.Bytes()) {
			t.Fatalf("output depends on the split points:\n%q\n%q", one.Bytes(), split.Bytes())
		}
		// Host names match in any letter case.
		if !bytes.Contains(bytes.ToLower(in), []byte("origin.pub.example")) && !bytes.Contains(in, []byte("&")) && !bytes.Equal(one.Bytes(), in) {
			t.Fatalf("nothing to rewrite, yet the output changed:\n%q\n%q", in, one.Bytes())
		}
		var plain bytes.Buffer
		if _, err := Rewrite(&plain, bytes.NewReader(in), &Options{MaxTokenBytes: 4096}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain.Bytes(), in) {
			t.Fatalf("with no origin host the output differs from the input:\n%q\n%q", in, plain.Bytes())
		}
		var inj bytes.Buffer
		st, err := Rewrite(&inj, bytes.NewReader(in), &Options{HeadPrepend: []byte("\x01INJ\x01"), MaxTokenBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Replace(inj.Bytes(), []byte("\x01INJ\x01"), nil, 1); st.HeadFound && !bytes.Equal(got, in) {
			t.Fatalf("removing the injection does not give the input back")
		}
	})
}
