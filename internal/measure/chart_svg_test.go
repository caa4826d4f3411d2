package measure

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The chart is valid XML with a labelled bar for every mode, ordered as
// the modes are, scaled to the values, with an axis and units.
func TestChart(t *testing.T) {
	cpu := map[string]float64{ModeIdentity: 1, ModeGzipMirror: 8, ModeDeflateMirror: 9, ModeBrMirror: 12,
		ModeGzipToIdentity: 2, ModeDeflateToIdentity: 2.5, ModeBrToIdentity: 3}
	rep := &Report{Settings: Settings{Runs: 3}, Pages: []PageResult{pageWith("a", cpu), pageWith("b", cpu)}}
	rep.Summary = Summarize(rep.Pages)
	var buf bytes.Buffer
	if err := rep.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	type rect struct {
		Series string  `xml:"data-series,attr"`
		Key    string  `xml:"data-key,attr"`
		Class  string  `xml:"class,attr"`
		Width  float64 `xml:"width,attr"`
		Y      float64 `xml:"y,attr"`
	}
	var rects []rect
	texts := map[string][]string{} // class → contents
	dec := xml.NewDecoder(&buf)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not valid XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		switch se.Name.Local {
		case "rect":
			var r rect
			if err := dec.DecodeElement(&r, &se); err != nil {
				t.Fatal(err)
			}
			if r.Class == "bar" {
				rects = append(rects, r)
			}
		case "text":
			var s struct {
				Class string `xml:"class,attr"`
				Body  string `xml:",chardata"`
			}
			if err := dec.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			texts[s.Class] = append(texts[s.Class], s.Body)
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	var cpuBars []rect
	for _, r := range rects {
		if r.Series == "cpu" {
			cpuBars = append(cpuBars, r)
		}
	}
	if len(cpuBars) != len(Modes) {
		t.Fatalf("%d CPU bars, want %d", len(cpuBars), len(Modes))
	}
	for i, m := range ModeNames() {
		b := cpuBars[i]
		if b.Key != m {
			t.Errorf("bar %d is %q, want %q (mode order)", i, b.Key, m)
		}
		if i > 0 && b.Y <= cpuBars[i-1].Y {
			t.Errorf("bar %s is not below the previous bar", m)
		}
		// Widths are proportional to the values.
		want := cpu[m] / cpu[ModeBrMirror] * cpuBars[3].Width
		if math.Abs(b.Width-want) > 0.05 {
			t.Errorf("bar %s width %.2f, want %.2f", m, b.Width, want)
		}
		if !contains(texts["label"], m) {
			t.Errorf("no label %q in %q", m, texts["label"])
		}
		if !contains(texts["value"], strconv.FormatFloat(cpu[m], 'f', 3, 64)+" ms") {
			t.Errorf("no value label for %s in %q", m, texts["value"])
		}
	}
	series := map[string]int{}
	for _, r := range rects {
		series[r.Series]++
	}
	if series["edge-cpu"] != 2 || series["bytes"] < 7 {
		t.Errorf("bars per series %v", series)
	}
	if len(texts["title"]) != 1 || len(texts["panel-title"]) != 2 || len(texts["unit"]) != 2 || len(texts["tick-label"]) < 4 {
		t.Errorf("title, panel titles, units or ticks missing: %v", texts)
	}
	if !strings.Contains(strings.Join(texts["unit"], "|"), "ms") || !strings.Contains(strings.Join(texts["unit"], "|"), "kB") {
		t.Errorf("units %q", texts["unit"])
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
