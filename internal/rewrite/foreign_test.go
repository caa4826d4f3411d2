package rewrite

import (
	"strings"
	"testing"
)

// Regression (issue 18, "foreign content (SVG, MathML) is read as HTML"):
// inside <svg> and <math>, title, style and the other raw-text names are
// ordinary elements, and a CDATA section ends at "]]>"; the scanner read
// them as HTML, so the link after them stayed on the origin and the bids
// script was lost or written into the CDATA section.
func TestForeignContentIsNotRawText(t *testing.T) {
	link := `<a href="http://` + testOrigin + `/x">x</a>`
	rewritten := `<a href="https://` + testHost + `/x">x</a>`
	for _, tt := range []struct {
		name, in, want, skipped string
	}{
		{"svg title", "<head></head><body><svg><title>icon</svg>" + link + "</body>",
			"<head>[H]</head><body><svg><title>icon</svg>" + rewritten + "[BIDS]</body>", ""},
		{"svg style", "<head></head><body><svg><style>a{}</svg>" + link + "</body>",
			"<head>[H]</head><body><svg><style>a{}</svg>" + rewritten + "[BIDS]</body>", ""},
		{"CDATA section in svg", "<head></head><body><svg><![CDATA[ a > b </body> ]]></svg>" + link + "</body>",
			"<head>[H]</head><body><svg><![CDATA[ a > b </body> ]]></svg>" + rewritten + "[BIDS]</body>", ""},
		{"math title", "<head></head><body><math><title>" + link + "</math></body>",
			"<head>[H]</head><body><math><title>" + rewritten + "</math>[BIDS]</body>", ""},
		{"svg script is markup", "<head></head><body><svg><script>" + link + "</script></svg></body>",
			"<head>[H]</head><body><svg><script>" + rewritten + "</script></svg>[BIDS]</body>", ""},
		// Outside foreign content CDATA is a bogus comment, up to the first '>'.
		{"CDATA outside svg", "<head></head><body><![CDATA[ a > " + link + " ]]></body>",
			"<head>[H]</head><body><![CDATA[ a > " + rewritten + " ]]>[BIDS]</body>", ""},
		// Integration points take HTML start tags, raw text included.
		{"style in foreignObject is raw text", "<head></head><body><svg><foreignObject><style>" + link + "</style></foreignObject></svg></body>",
			"<head>[H]</head><body><svg><foreignObject><style>" + link + "</style></foreignObject></svg>[BIDS]</body>", ""},
		{"title in mtext is RCDATA", "<head></head><body><math><mtext><title>" + link + "</title></mtext></math></body>",
			"<head>[H]</head><body><math><mtext><title>" + link + "</title></mtext></math>[BIDS]</body>", ""},
		{"annotation-xml for HTML", `<head></head><body><math><annotation-xml encoding="Text/HTML"><textarea>` + link + "</textarea></math></body>",
			`<head>[H]</head><body><math><annotation-xml encoding="Text/HTML"><textarea>` + link + "</textarea></math>[BIDS]</body>", ""},
		// A breakout tag leaves foreign content: the title after it is HTML.
		{"breakout p", "<head></head><body><svg><p><title>" + link + "</title></body>",
			"<head>[H]</head><body><svg><p><title>" + link + "</title>[BIDS]</body>", ""},
		{"self-closing svg opens nothing", "<head></head><body><svg/><title>" + link + "</title></body>",
			"<head>[H]</head><body><svg/><title>" + link + "</title>[BIDS]</body>", ""},
		{"svg closed", "<head></head><body><svg><g></g></svg><title>" + link + "</title></body>",
			"<head>[H]</head><body><svg><g></g></svg><title>" + link + "</title>[BIDS]</body>", ""},
		// A script in MathML never runs: the bids wait for the end of the
		// page, and are skipped when it ends in MathML or in a CDATA section.
		{"body end in math", "<head></head><body><math></body></math>",
			"<head>[H]</head><body><math></body></math>[BIDS]", ""},
		{"page ends in math", "<head></head><body><math></body>", "<head>[H]</head><body><math></body>", "math"},
		{"page ends in CDATA", "<head></head><body><svg><![CDATA[ </body>", "<head>[H]</head><body><svg><![CDATA[ </body>", "![CDATA["},
		{"body end in svg runs", "<head></head><body><svg></body>", "<head>[H]</head><body><svg>[BIDS]</body>", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOpts()
			o.HeadPrepend = []byte("[H]")
			o.BodyEnd = func() []byte { return []byte("[BIDS]") }
			got, st := run(t, tt.in, o)
			if got != tt.want || st.BodyEndSkipped != tt.skipped {
				t.Errorf("\n in: %s\ngot: %s (skipped %q)\nwant %s (skipped %q)", tt.in, got, st.BodyEndSkipped, tt.want, tt.skipped)
			}
			// The same with the input split into one-byte reads.
			var split strings.Builder
			if _, err := Rewrite(&split, &randomChunks{s: tt.in, rng: newRand(1), max: 1}, o); err != nil || split.String() != got {
				t.Errorf("split reads give %q (%v)", split.String(), err)
			}
		})
	}
}

// A page deep in SVG keeps a bounded stack; the scanner stops following
// the page at the first element it cannot hold (TestDeepSVGBidsNotInsidePageScript).
func TestForeignStackBounded(t *testing.T) {
	in := "<head></head><svg>" + strings.Repeat("<g>", 10*maxForeignDepth) + "</body>"
	o := testOpts()
	o.HeadPrepend, o.BodyEnd = []byte("[H]"), func() []byte { return []byte("[BIDS]") }
	var out strings.Builder
	rw := pool.Get().(*rewriter)
	rw.reset(&out, o)
	if err := rw.run(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if len(rw.foreign) > maxForeignDepth {
		t.Errorf("foreign stack holds %d elements", len(rw.foreign))
	}
	deep := rw.stats.DepthExceeded
	rw.release()
	at := len("<head></head><svg>") + 3*(maxForeignDepth-1)
	if want := "<head>[H]" + in[len("<head>"):at] + "[BIDS]" + in[at:]; !deep || out.String() != want {
		t.Errorf("depth exceeded %v; output differs from the input with the bids before the element past the stack", deep)
	}
}
