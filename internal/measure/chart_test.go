package measure

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"testing"
	"unicode/utf8"
)

// svgText is one <text> of the chart with the attributes that place it.
type svgText struct {
	Class  string `xml:"class,attr"`
	X      string `xml:"x,attr"`
	Anchor string `xml:"text-anchor,attr"`
	Body   string `xml:",chardata"`
}

func parseChart(t *testing.T, r *Report) (width float64, texts []svgText, keys []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return width, texts, keys
		}
		if err != nil {
			t.Fatalf("chart is not valid XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "svg":
			for _, a := range se.Attr {
				if a.Name.Local == "width" {
					width, _ = strconv.ParseFloat(a.Value, 64)
				}
			}
		case "text":
			var s svgText
			if err := dec.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, s)
		case "rect":
			for _, a := range se.Attr {
				if a.Name.Local == "data-series" {
					keys = append(keys, a.Value)
				}
			}
		}
	}
}

// A chart bar is drawn once: the mirror modes were drawn a second time
// beside the builtin-edge offload bars, with the same label.
func TestChartDrawsEachMirrorBarOnce(t *testing.T) {
	cpu := map[string]float64{ModeGzipMirror: 8, ModeBrMirror: 12}
	rep := &Report{Settings: Settings{Runs: 1}, Pages: []PageResult{pageWith("a", cpu)}}
	rep.Summary = Summarize(rep.Pages)
	_, texts, _ := parseChart(t, rep)
	seen := map[string]int{}
	for _, x := range texts {
		if x.Class == "label" {
			seen[x.Body]++
		}
	}
	for _, m := range []string{ModeGzipMirror, ModeBrMirror} {
		if seen[m] != 1 {
			t.Errorf("label %q drawn %d times, want once", m, seen[m])
		}
	}
	for l, n := range seen {
		if n > 1 && l != "" {
			t.Errorf("label %q drawn %d times", l, n)
		}
	}
}

// Every label, right-aligned against the plot, and every value label,
// beside its bar, lies inside the viewBox at 7.5 px a character (13 px
// sans-serif averages about 7 px): the longest label, a builtin-edge
// offload bar, started left of x = 0.
func TestChartClipsNoLabel(t *testing.T) {
	cpu := map[string]float64{ModeBrMirror: 123456.789}
	rep := &Report{Settings: Settings{Runs: 1}, Pages: []PageResult{pageWith("a", cpu)}}
	rep.Summary = Summarize(rep.Pages)
	width, texts, _ := parseChart(t, rep)
	const charW = 7.5
	labels := 0
	for _, x := range texts {
		if x.Class != "label" && x.Class != "value" {
			continue
		}
		labels++
		pos, err := strconv.ParseFloat(x.X, 64)
		if err != nil {
			t.Fatalf("text %q: x %q", x.Body, x.X)
		}
		w := charW * float64(utf8.RuneCountInString(x.Body))
		start, end := pos, pos+w
		if x.Anchor == "end" {
			start, end = pos-w, pos
		}
		if start < 0 || end > width {
			t.Errorf("%s %q spans x %.0f..%.0f, outside 0..%.0f", x.Class, x.Body, start, end, width)
		}
	}
	if labels < 2*len(Modes) {
		t.Fatalf("only %d labels found", labels)
	}
}
