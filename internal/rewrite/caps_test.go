package rewrite

import (
	"strings"
	"testing"
)

// deepSVG is an SVG root and n-1 nested <g>: n open foreign elements.
func deepSVG(n int) string { return "<svg>" + strings.Repeat("<g>", n-1) }

// Regression (issue 30, "deep SVG puts the bids script inside the page's
// own <script>"): with <svg> and 255 nested <g> the foreign stack was full,
// the <foreignObject> after them was not on it, so its <script> was read
// as an SVG element, and the "</body>" in the script's string got the bids
// script. Past a cap the scanner no longer knows where it is: the bids go
// at the last place it knew, before the tag it could not follow, when a
// script runs there, and from that tag on the page is copied as it is.
func TestDeepSVGBidsNotInsidePageScript(t *testing.T) {
	link := `<a href="http://` + testOrigin + `/x">x</a>`
	pageScript := `<foreignObject><script>var s = "</body>";</script></foreignObject>`
	for _, tt := range []struct {
		name, in, want, skipped string
		depth, oversize         bool
	}{
		{name: "script in foreignObject past the cap",
			in:    "<head></head><body>" + deepSVG(maxForeignDepth) + pageScript + link + "</svg></body>",
			want:  "<head>[H]</head><body>" + deepSVG(maxForeignDepth) + "[BIDS]" + pageScript + link + "</svg></body>",
			depth: true},
		{name: "one element below the cap is still followed",
			in:   "<head></head><body>" + deepSVG(maxForeignDepth-1) + pageScript + "</svg>" + link + "</body>",
			want: "<head>[H]</head><body>" + deepSVG(maxForeignDepth-1) + pageScript + "</svg>" + strings.Replace(link, "http://"+testOrigin, "https://"+testHost, 1) + "[BIDS]</body>"},
		{name: "HTML in an integration point past the cap",
			in:    "<head></head><body><svg><foreignObject>" + strings.Repeat("<div>", maxForeignDepth-2) + "<p><script>var s = \"</body>\";</script>" + link + "</body>",
			want:  "<head>[H]</head><body><svg><foreignObject>" + strings.Repeat("<div>", maxForeignDepth-2) + "[BIDS]<p><script>var s = \"</body>\";</script>" + link + "</body>",
			depth: true},
		// In MathML a script never runs: past the cap the bids have no place.
		{name: "MathML past the cap",
			in:    "<head></head><body><math>" + strings.Repeat("<mrow>", maxForeignDepth-1) + "<mi><script>var s = \"</body>\";</script></math>" + link + "</body>",
			want:  "<head>[H]</head><body><math>" + strings.Repeat("<mrow>", maxForeignDepth-1) + "<mi><script>var s = \"</body>\";</script></math>" + link + "</body>",
			depth: true, skipped: "math"},
		// Names count too: 64 elements of 300-letter names hold no more
		// than the stack's bytes allow.
		{name: "long names past the cap",
			in:    "<head></head><body><svg>" + strings.Repeat("<g"+strings.Repeat("x", 300)+">", 64) + pageScript + "</body>",
			want:  "<head>[H]</head><body><svg>" + strings.Repeat("<g"+strings.Repeat("x", 300)+">", maxForeignNames/301) + "[BIDS]" + strings.Repeat("<g"+strings.Repeat("x", 300)+">", 64-maxForeignNames/301) + pageScript + "</body>",
			depth: true},
		// A breakout leaves MathML, but the push after it does not fit:
		// the place before the tag is still MathML.
		{name: "breakout from MathML past the cap",
			in:    "<head></head><body><svg><foreignObject><" + strings.Repeat("x", maxForeignNames-len("svgforeignobject")-9) + "><math><blockquote><script>var s = \"</body>\";</script>" + link + "</body>",
			want:  "<head>[H]</head><body><svg><foreignObject><" + strings.Repeat("x", maxForeignNames-len("svgforeignobject")-9) + "><math><blockquote><script>var s = \"</body>\";</script>" + link + "</body>",
			depth: true, skipped: "math"},
		{name: "bids placed before the cap stay",
			in:    "<head></head><body></body>" + deepSVG(maxForeignDepth) + pageScript + link,
			want:  "<head>[H]</head><body>[BIDS]</body>" + deepSVG(maxForeignDepth) + pageScript + link,
			depth: true},
		// A tag over MaxTokenBytes is a cap too: the bids go before it, not
		// at the end of a page that may end anywhere.
		{name: "oversize tag before an unterminated script",
			in:       "<head></head><body><div title=\"" + strings.Repeat("z", 300) + "\">" + link + "<script>var s = \"",
			want:     "<head>[H]</head><body>[BIDS]<div title=\"" + strings.Repeat("z", 300) + "\">" + link + "<script>var s = \"",
			oversize: true},
		{name: "oversize end tag of a script",
			in:       "<head></head><body><script>var s = 1</script title=\"" + strings.Repeat("z", 300) + "\">" + link + "</body>",
			want:     "<head>[H]</head><body><script>var s = 1</script title=\"" + strings.Repeat("z", 300) + "\">" + link + "</body>",
			oversize: true, skipped: "script"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOpts()
			o.HeadPrepend = []byte("[H]")
			o.BodyEnd = func() []byte { return []byte("[BIDS]") }
			o.MaxTokenBytes = 256
			if !tt.oversize {
				o.MaxTokenBytes = 0
			}
			got, st := run(t, tt.in, o)
			if got != tt.want || st.BodyEndSkipped != tt.skipped || st.DepthExceeded != tt.depth || st.Oversize != tt.oversize {
				t.Errorf("\n in: %.300s\ngot: %.300s (skipped %q, depth %v, oversize %v)\nwant %.300s (skipped %q, depth %v, oversize %v)",
					tt.in, got, st.BodyEndSkipped, st.DepthExceeded, st.Oversize, tt.want, tt.skipped, tt.depth, tt.oversize)
			}
			for k := range 4 {
				var split strings.Builder
				if _, err := Rewrite(&split, &randomChunks{s: tt.in, rng: newRand(int64(k)), max: 1 + 7*k}, o); err != nil || split.String() != got {
					t.Errorf("split reads %d give %.300q (%v)", k, split.String(), err)
				}
			}
		})
	}
}
