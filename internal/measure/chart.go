package measure

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// bar is one bar of a chart panel.
type bar struct {
	series, key, label string
	value              float64
	color              string
}

// panel is one horizontal bar chart.
type panel struct {
	title, unit string
	bars        []bar
	format      func(float64) string
}

const (
	colorMirror  = "#d95f02" // the guest decodes and re-encodes
	colorOffload = "#1b9e77" // the guest emits identity
	colorEdge    = "#7570b3" // the edge compresses
	colorOrigin  = "#999999" // what the origin sends
	colorBuiltin = "#e7298a" // guest plus builtin edge, offload in one process
)

func modeColor(name string) string {
	if strings.HasSuffix(name, "_mirror") {
		return colorMirror
	}
	return colorOffload
}

// chartPanels builds the two panels from a summary: guest CPU per mode
// (with the edge's CPU for the offload delivery) and bytes per page.
func chartPanels(r *Report) []panel {
	s := r.Summary
	cpu := panel{
		title:  fmt.Sprintf("Guest CPU per page by mode: median over %d pages (thread CPU time, median of %d runs)", s.Pages, r.Settings.Runs),
		unit:   "ms of CPU per page",
		format: func(v float64) string { return fmt.Sprintf("%.3f ms", v) },
	}
	for _, n := range ModeNames() {
		cpu.bars = append(cpu.bars, bar{series: "cpu", key: n, label: n, value: s.MedianCPUMS[n], color: modeColor(n)})
	}
	for _, c := range deliveryCodings {
		cpu.bars = append(cpu.bars, bar{series: "edge-cpu", key: "edge_" + c, label: "edge " + c + " (offload delivery)", value: s.MedianDeliveredCPU[c], color: colorEdge})
	}
	// Offload with the builtin edge, to set beside the mirror bars above:
	// in one process the CPU moves to the edge rather than going away. The
	// mirror bars are not drawn a second time; their label names the mirror
	// mode each group replaces.
	for _, c := range deliveryCodings {
		for _, mode := range offloadModes(c) {
			k := builtinKey(mode, c)
			cpu.bars = append(cpu.bars, bar{series: "builtin-cpu", key: k, label: mode + " + edge " + c + " (builtin)", value: s.MedianBuiltinCPU[k], color: colorBuiltin})
		}
	}
	medianBytes := func(get func(PageResult) (int64, bool)) float64 {
		var xs []float64
		for _, p := range r.Pages {
			if v, ok := get(p); ok {
				xs = append(xs, float64(v)/1000)
			}
		}
		return Median(xs)
	}
	size := panel{
		title:  fmt.Sprintf("Bytes per page: median over %d pages (origin, mirror output, offload delivered by the edge)", s.Pages),
		unit:   "kB per page (1 kB = 1000 bytes)",
		format: func(v float64) string { return fmt.Sprintf("%.1f kB", v) },
	}
	size.bars = append(size.bars, bar{series: "bytes", key: "origin_identity", label: "origin identity",
		value: medianBytes(func(p PageResult) (int64, bool) { return p.IdentityBytes, true }), color: colorOrigin})
	for _, c := range []string{"gzip", "br"} {
		size.bars = append(size.bars, bar{series: "bytes", key: "origin_" + c, label: "origin " + c,
			value: medianBytes(func(p PageResult) (int64, bool) { v, ok := p.OriginBytes[c]; return v, ok }), color: colorOrigin})
	}
	for _, n := range []string{ModeGzipMirror, ModeBrMirror} {
		size.bars = append(size.bars, bar{series: "bytes", key: n, label: n + " output",
			value: medianBytes(func(p PageResult) (int64, bool) { m, ok := p.Modes[n]; return m.OutBytes, ok }), color: colorMirror})
	}
	for _, c := range deliveryCodings {
		size.bars = append(size.bars, bar{series: "bytes", key: "delivered_" + c, label: "offload, edge " + c,
			value: medianBytes(func(p PageResult) (int64, bool) { v, ok := p.DeliveredBytes[c]; return v, ok }), color: colorEdge})
	}
	return []panel{cpu, size}
}

// niceStep is a 1, 2 or 5 × 10^k step giving about n ticks up to max.
func niceStep(max float64, n int) float64 {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return 1
	}
	raw := max / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// WriteChart writes an SVG bar chart of guest CPU per mode and bytes per
// page, readable without the table.
func (r *Report) WriteChart(w io.Writer) error {
	const (
		plotW   = 560
		barH    = 22
		gap     = 8
		titleH  = 34
		axisH   = 46
		panelGp = 30
	)
	panels := chartPanels(r)
	left, width := chartColumns(panels, plotW)
	height := 90
	for _, p := range panels {
		height += titleH + len(p.bars)*(barH+gap) + axisH + panelGp
	}
	height += 60 // the legend, in up to two rows
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<title>ssatd measure: guest CPU and bytes per mode</title>`+"\n")
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text class="title" x="20" y="30" font-size="18" font-weight="bold">%s</text>`+"\n",
		esc(fmt.Sprintf("ssatd measure: what compression costs the guest (%d pages)", r.Summary.Pages)))
	fmt.Fprintf(&b, `<text class="subtitle" x="20" y="52" fill="#444">%s</text>`+"\n",
		esc(fmt.Sprintf("offload_cpu_ratio (gzip_to_identity / gzip_mirror) %.3f; identity_cpu_ratio %.3f; all outputs equivalent: %t",
			r.Summary.OffloadCPURatio, r.Summary.IdentityCPURatio, r.Summary.AllEquivalent)))
	fmt.Fprintf(&b, `<text class="subtitle" x="20" y="70" fill="#444">%s</text>`+"\n",
		esc("offload saves ssatd's CPU when a CDN compresses (external); with the builtin edge it moves to the edge (pink: guest + edge, beside mirror)"))
	y := 90
	for _, p := range panels {
		y += titleH
		fmt.Fprintf(&b, `<text class="panel-title" x="20" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y-12, esc(p.title))
		maxV := 0.0
		for _, br := range p.bars {
			maxV = math.Max(maxV, br.value)
		}
		step := niceStep(maxV, 5)
		axisMax := math.Max(step, math.Ceil(maxV/step)*step)
		top := y
		bottom := top + len(p.bars)*(barH+gap)
		// Grid and x axis first, so that the bars are drawn over them.
		for v := 0.0; v <= axisMax*1.0000001; v += step {
			x := float64(left) + v/axisMax*plotW
			fmt.Fprintf(&b, `<line class="grid" x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#ddd"/>`+"\n", x, top-4, x, bottom)
			fmt.Fprintf(&b, `<line class="tick" x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#000"/>`+"\n", x, bottom, x, bottom+5)
			fmt.Fprintf(&b, `<text class="tick-label" x="%.2f" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", x, bottom+18, esc(trimFloat(v)))
		}
		fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", left, bottom, left+plotW, bottom)
		fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", left, top-4, left, bottom)
		fmt.Fprintf(&b, `<text class="unit" x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", left+plotW/2, bottom+36, esc(p.unit))
		for _, br := range p.bars {
			bw := 0.0
			if axisMax > 0 {
				bw = br.value / axisMax * plotW
			}
			fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-10, y+barH-6, esc(br.label))
			fmt.Fprintf(&b, `<rect class="bar" data-series="%s" data-key="%s" x="%d" y="%d" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				esc(br.series), esc(br.key), left, y, bw, barH, br.color, esc(br.label+": "+p.format(br.value)))
			fmt.Fprintf(&b, `<text class="value" x="%.2f" y="%d">%s</text>`+"\n", float64(left)+bw+6, y+barH-6, esc(p.format(br.value)))
			y += barH + gap
		}
		y += axisH + panelGp
	}
	// Legend.
	lx := 20
	for _, l := range []struct{ color, text string }{
		{colorMirror, "mirror: guest decodes and re-encodes"},
		{colorOffload, "guest emits identity (offload)"},
		{colorEdge, "edge compression of the identity output"},
		{colorBuiltin, "offload, builtin edge: guest + edge"},
		{colorOrigin, "origin"},
	} {
		if w := 40 + 7*len(l.text); lx+w > width {
			lx, y = 20, y+22
		}
		fmt.Fprintf(&b, `<rect class="legend" x="%d" y="%d" width="14" height="14" fill="%s"/>`, lx, y-12, l.color)
		fmt.Fprintf(&b, `<text class="legend-label" x="%d" y="%d">%s</text>`+"\n", lx+20, y, esc(l.text))
		lx += 40 + 7*len(l.text)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// labelCharW is the width allowed per character of a 13 px sans-serif
// label: wider than the average glyph (about 0.55 em), so that a label of
// wide letters still fits.
const labelCharW = 8

// chartColumns sizes the label column to the longest label and the whole
// chart to the label column, the plot and the longest value label beside
// the longest bar, so that no text is clipped by the viewBox.
func chartColumns(panels []panel, plotW int) (left, width int) {
	longest, longestValue := 0, 0
	for _, p := range panels {
		for _, br := range p.bars {
			longest = max(longest, utf8.RuneCountInString(br.label))
			longestValue = max(longestValue, utf8.RuneCountInString(p.format(br.value)))
		}
	}
	left = max(250, 20+10+longest*labelCharW)
	width = max(1000, left+plotW+6+longestValue*labelCharW+20)
	return left, width
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.6g", v)
	return s
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
