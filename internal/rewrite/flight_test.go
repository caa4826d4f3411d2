package rewrite

import (
	"strings"
	"testing"
)

// push is a Next.js data script for a chunk written as a JSON string's
// content.
func push(chunk string) string { return `<script>self.__next_f.push([1,"` + chunk + `"])</script>` }

// TestFlightTextRowLengths: in a Next.js page's Flight data, a text row
// ("T", its length in UTF-8 bytes in hex) gets the request host and its
// new length, where its length is in one push; rows that end at a newline
// get the request host as any script does; a row ssatd cannot follow, and
// every one after it, keeps its bytes (react, ReactFlightClient.js,
// processBinaryChunk; Trusted Server, docs/guide/rsc-hydration.md).
func TestFlightTextRowLengths(t *testing.T) {
	const o, w = "https://origin.pub.example", "https://www.pub.example"
	cases := []struct{ name, in, want string }{
		{"text row in one push",
			push(`1a:T29,{\"url\":\"` + o + `/path\"}`),
			push(`1a:T26,{\"url\":\"` + w + `/path\"}`)},
		{"newline rows around a text row",
			push(`0:[\"$\",\"a\",null,{\"href\":\"` + o + `/x\"}]\n1:T1b,` + o + `/2:\"` + o + `\"\n`),
			push(`0:[\"$\",\"a\",null,{\"href\":\"` + w + `/x\"}]\n1:T18,` + w + `/2:\"` + w + `\"\n`)},
		{"text row over three pushes, the length in the first",
			push(`5:T41,`) + "\n" + push(`see `+o+`/a and `) + `<p>between</p>` + push(o+`/b`) + push(`6:\"`+o+`\"\n`),
			push(`5:T3b,`) + "\n" + push(`see `+w+`/a and `) + `<p>between</p>` + push(w+`/b`) + push(`6:\"`+w+`\"\n`)},
		{"escapes count as the bytes they stand for",
			// \u00e9 is 2 bytes, the pair 4, \n 1, \" 1, a lone surrogate 3.
			push(`7:T26,\u00e9\ud83d\ude00\n\"\udc00` + o + `/`),
			push(`7:T23,\u00e9\ud83d\ude00\n\"\udc00` + w + `/`)},
		{"raw UTF-8 counts its bytes",
			push(`8:T1d,é` + o + `/`),
			push(`8:T1a,é` + w + `/`)},
		{"a length that goes on in the next push keeps the row as it was",
			push(`9:T2`) + push(`8,`+o+`/ abcdefghijkl`) + push(`a:\"`+o+`\"\n`),
			push(`9:T2`) + push(`8,`+o+`/ abcdefghijkl`) + push(`a:\"`+w+`\"\n`)},
		{"a text row with no origin is unchanged",
			push(`b:T5,hello`) + push(`c:\"`+o+`\"\n`),
			push(`b:T5,hello`) + push(`c:\"`+w+`\"\n`)},
		{"an empty text row",
			push(`d:T0,e:\"` + o + `\"\n`),
			push(`d:T0,e:\"` + w + `\"\n`)},
		{"a binary row's content is left, and the rows after it read",
			push(`f:A1b,`+o+`/`) + push(`10:\"`+o+`\"\n`),
			push(`f:A1b,`+o+`/`) + push(`10:\"`+w+`\"\n`)},
		{"a base64 push carries rows too",
			// "11:T1b," in base64, then its content in a data push.
			`<script>self.__next_f.push([3,"MTE6VDFiLA=="])</script>` + push(o+`/12:\"`+o+`\"\n`),
			`<script>self.__next_f.push([3,"MTE6VDFiLA=="])</script>` + push(o+`/12:\"`+w+`\"\n`)},
		{"bootstrap and form state pushes are left",
			`<script>(self.__next_f=self.__next_f||[]).push([0])</script><script>self.__next_f.push([2,null])</script>` + push(`0:\"`+o+`\"\n`),
			`<script>(self.__next_f=self.__next_f||[]).push([0])</script><script>self.__next_f.push([2,null])</script>` + push(`0:\"`+w+`\"\n`)},
		{"a push that is not Next.js's stops the rules for the page's Flight data",
			`<script>self.__next_f.push([1,"0:1\n"]);go()</script>` + push(`1:T1b,`+o+`/`) + `<script>u="` + o + `/"</script>`,
			`<script>self.__next_f.push([1,"0:1\n"]);go()</script>` + push(`1:T1b,`+o+`/`) + `<script>u="` + w + `/"</script>`},
		{"a row id that is not hex stops them",
			push(`zz:T1b,`+o+`/`) + push(`1:\"`+o+`\"\n`),
			push(`zz:T1b,`+o+`/`) + push(`1:\"`+o+`\"\n`)},
		{"an escape JSON does not have stops them",
			push(`1:T1e,\x41`+o) + push(`1:\"`+o+`\"\n`),
			push(`1:T1e,\x41`+o) + push(`1:\"`+o+`\"\n`)},
		{"a page that ends inside a text row leaves it",
			push(`1:T40,` + o + `/`),
			push(`1:T40,` + o + `/`)},
		{"other scripts keep the text rules",
			`<script> self.__next_fx=1;u="` + o + `/"</script><script>self.__next</script>`,
			`<script> self.__next_fx=1;u="` + w + `/"</script><script>self.__next</script>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := "<!doctype html><html><head></head><body>" + c.in + "</body></html>"
			want := "<!doctype html><html><head></head><body>" + c.want + "</body></html>"
			inlineAnyReads(t, page, want, 30)
		})
	}
}

// TestFlightHoldIsBounded: a text row longer than the token limit, or one
// whose pushes are further apart than it, is copied as it is, and the
// output never waits for more than the limit.
func TestFlightHoldIsBounded(t *testing.T) {
	const o = "https://origin.pub.example"
	long := strings.Repeat("x", 100)
	cases := []struct{ name, in string }{
		{"declared longer than the limit", push(`1:T200,` + o + `/` + long)},
		{"pushes too far apart", push(`1:T36,`+o+`/`) + "<p>" + long + long + long + "</p>" + push(o+`/`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := "<html><body>" + c.in + "</body></html>"
			o := &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https",
				Inline: true, MaxTokenBytes: 256}
			got, _ := run(t, page, o)
			if got != page {
				t.Fatalf("got  %q\nwant %q", got, page)
			}
		})
	}
}
