package measure

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ModeResult is one mode of one page. Times are medians over the timed runs.
type ModeResult struct {
	In         string  `json:"in"`
	Out        string  `json:"out"`
	InBytes    int64   `json:"in_bytes"`   // what the origin sent in coding In
	WallMS     float64 `json:"wall_ms"`    // Transform, wall clock
	CPUMS      float64 `json:"cpu_ms"`     // Transform, CPU of the thread it ran on
	GuestMS    float64 `json:"guest_ms"`   // the pipeline's own guest time (auction wait excluded)
	OutBytes   int64   `json:"out_bytes"`  // what the guest emitted in coding Out
	Equivalent bool    `json:"equivalent"` // decoded output == identity output
	// Simulated: with -url, the origin never sent In when asked, so
	// InBytes and the mode's figures come from encoding the identity page.
	Simulated bool `json:"simulated,omitempty"`
}

// PageResult is everything measured for one page.
type PageResult struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Origin is the origin the page was measured as coming from: only
	// links naming its host[:port] are rewritten. OriginFrom says where it
	// came from: config, url, canonical link, og:url, or fallback (the page
	// names no origin, so none of its links is rewritten).
	Origin         string                `json:"origin"`
	OriginFrom     string                `json:"origin_from"`
	IdentityBytes  int64                 `json:"identity_bytes"`
	OriginBytes    map[string]int64      `json:"origin_bytes"`
	Eligible       bool                  `json:"eligible"`
	ProcessedBytes int64                 `json:"processed_bytes"` // rewritten identity output
	Modes          map[string]ModeResult `json:"modes"`
	// DeliveredBytes is what the edge delivers for the identity output
	// (offload), per client coding; DeliveredCPUMS its thread CPU time.
	DeliveredBytes map[string]int64   `json:"delivered_bytes"`
	DeliveredCPUMS map[string]float64 `json:"delivered_cpu_ms"`
	Failures       []string           `json:"failures,omitempty"`
	// SimulatedOrigin lists, with -url, the codings the origin did not send
	// when asked for them (deflate is never asked): their OriginBytes are
	// the identity page encoded at the -origin-* levels.
	SimulatedOrigin []string `json:"simulated_origin_codings,omitempty"`
}

// Summary aggregates pages.
type Summary struct {
	Pages         int      `json:"pages"`
	AllEquivalent bool     `json:"all_equivalent"`
	Failures      []string `json:"failures,omitempty"` // "page: mode: why"
	// Per mode: the median over pages of each page's median, and the sum
	// over pages.
	MedianCPUMS   map[string]float64 `json:"median_cpu_ms"`
	MedianWallMS  map[string]float64 `json:"median_wall_ms"`
	TotalCPUMS    map[string]float64 `json:"total_cpu_ms"`
	TotalWallMS   map[string]float64 `json:"total_wall_ms"`
	TotalOutBytes map[string]int64   `json:"total_out_bytes"`
	// Sizes summed over pages.
	TotalIdentityBytes  int64              `json:"total_identity_bytes"`
	TotalOriginBytes    map[string]int64   `json:"total_origin_bytes"`
	TotalDeliveredBytes map[string]int64   `json:"total_delivered_bytes"`
	MedianDeliveredCPU  map[string]float64 `json:"median_delivered_cpu_ms"`
	TotalDeliveredCPU   map[string]float64 `json:"total_delivered_cpu_ms"`
	// MedianBuiltinCPU is the median over pages of guest plus builtin
	// edge CPU for an offloaded page, keyed "MODE+edge_X": the offload
	// mode (identity when the origin honours identity, X_to_identity when
	// it sends X anyway) plus the edge delivering X. It is what offload
	// costs in the one process, to set beside X_mirror.
	MedianBuiltinCPU map[string]float64 `json:"median_builtin_offload_cpu_ms"`
	// OffloadCPURatio is median gzip_to_identity CPU / median gzip_mirror
	// CPU; IdentityCPURatio is median identity CPU / median gzip_mirror CPU.
	// 0 when gzip_mirror CPU is 0 (no pages, or no CPU clock).
	OffloadCPURatio  float64 `json:"offload_cpu_ratio"`
	IdentityCPURatio float64 `json:"identity_cpu_ratio"`
	// OffloadByteChange is, per client coding, total offload delivered
	// bytes / total mirror output bytes - 1: the byte penalty of offload
	// (negative when offload is smaller). OffloadVerdict weighs it against
	// the CPU change (docs/measuring.md, "The verdict"). A coding without
	// mirror bytes or mirror CPU has neither.
	OffloadByteChange map[string]float64 `json:"offload_byte_change"`
	OffloadVerdict    map[string]string  `json:"offload_verdict"`
}

// Settings describe how a report was made.
type Settings struct {
	Runs                int    `json:"runs"`
	CPUClock            string `json:"cpu_clock"`
	OriginGzipLevel     int    `json:"origin_gzip_level"`
	OriginBrotliQuality int    `json:"origin_brotli_quality"`
	OriginBrotliWindow  int    `json:"origin_brotli_window"`
	GuestGzipLevel      int    `json:"guest_gzip_level"`
	GuestBrotliQuality  int    `json:"guest_brotli_quality"`
	DeliveryGzipLevel   int    `json:"delivery_gzip_level"`
	DeliveryBrQuality   int    `json:"delivery_brotli_quality"`
	Config              string `json:"config"` // file, or "default"
}

// Report is the offline (and live-origin) result.
type Report struct {
	Settings Settings     `json:"settings"`
	Fetches  []Fetch      `json:"fetches,omitempty"` // -url only
	Pages    []PageResult `json:"pages"`
	Summary  Summary      `json:"summary"`
}

// Summarize aggregates page results.
func Summarize(pages []PageResult) Summary {
	s := Summary{
		Pages:               len(pages),
		AllEquivalent:       true,
		MedianCPUMS:         map[string]float64{},
		MedianWallMS:        map[string]float64{},
		TotalCPUMS:          map[string]float64{},
		TotalWallMS:         map[string]float64{},
		TotalOutBytes:       map[string]int64{},
		TotalOriginBytes:    map[string]int64{},
		TotalDeliveredBytes: map[string]int64{},
		MedianDeliveredCPU:  map[string]float64{},
		TotalDeliveredCPU:   map[string]float64{},
		MedianBuiltinCPU:    map[string]float64{},
	}
	for _, p := range pages {
		for _, f := range p.Failures {
			s.AllEquivalent = false
			s.Failures = append(s.Failures, p.Name+": "+f)
		}
		s.TotalIdentityBytes += p.IdentityBytes
		for k, v := range p.OriginBytes {
			s.TotalOriginBytes[k] += v
		}
		for k, v := range p.DeliveredBytes {
			s.TotalDeliveredBytes[k] += v
		}
	}
	for _, name := range ModeNames() {
		var cpus, walls []float64
		for _, p := range pages {
			mr, ok := p.Modes[name]
			if !ok {
				continue
			}
			if !mr.Equivalent {
				s.AllEquivalent = false
			}
			cpus = append(cpus, mr.CPUMS)
			walls = append(walls, mr.WallMS)
			s.TotalCPUMS[name] += mr.CPUMS
			s.TotalWallMS[name] += mr.WallMS
			s.TotalOutBytes[name] += mr.OutBytes
		}
		s.MedianCPUMS[name] = Median(cpus)
		s.MedianWallMS[name] = Median(walls)
	}
	for _, c := range deliveryCodings {
		var cpus []float64
		builtin := map[string][]float64{}
		for _, p := range pages {
			v, ok := p.DeliveredCPUMS[c]
			if !ok {
				continue
			}
			cpus = append(cpus, v)
			s.TotalDeliveredCPU[c] += v
			for _, mode := range offloadModes(c) {
				if guest, ok := p.Modes[mode]; ok {
					builtin[builtinKey(mode, c)] = append(builtin[builtinKey(mode, c)], guest.CPUMS+v)
				}
			}
		}
		s.MedianDeliveredCPU[c] = Median(cpus)
		for k, xs := range builtin {
			s.MedianBuiltinCPU[k] = Median(xs)
		}
	}
	s.OffloadCPURatio = ratio(s.MedianCPUMS[ModeGzipToIdentity], s.MedianCPUMS[ModeGzipMirror])
	s.IdentityCPURatio = ratio(s.MedianCPUMS[ModeIdentity], s.MedianCPUMS[ModeGzipMirror])
	offloadVerdicts(&s)
	return s
}

// mirrorModes are, per coding a client gets, the mirror mode that serves
// it: the origin is asked for that coding and the guest re-encodes it.
var mirrorModes = map[string]string{"gzip": ModeGzipMirror, "br": ModeBrMirror}

// offloadModes are the guest modes of offload for a client getting c: the
// origin honours identity, or sends c anyway.
func offloadModes(c string) []string {
	return []string{ModeIdentity, map[string]string{"gzip": ModeGzipToIdentity, "br": ModeBrToIdentity}[c]}
}

// builtinKey names guest mode plus the builtin edge delivering c.
func builtinKey(mode, c string) string { return mode + "+edge_" + c }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// SummaryLine is the one-line summary printed under the table.
func (s Summary) SummaryLine() string {
	eq := "all outputs equivalent"
	if !s.AllEquivalent {
		eq = fmt.Sprintf("%d NOT EQUIVALENT", len(s.Failures))
	}
	return fmt.Sprintf("summary: %d pages, %s; median guest CPU gzip_mirror %.3f ms, gzip_to_identity %.3f ms, identity %.3f ms; offload_cpu_ratio %.3f, identity_cpu_ratio %.3f",
		s.Pages, eq, s.MedianCPUMS[ModeGzipMirror], s.MedianCPUMS[ModeGzipToIdentity], s.MedianCPUMS[ModeIdentity], s.OffloadCPURatio, s.IdentityCPURatio)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// csvHeader is the first CSV row.
var csvHeader = []string{"page", "mode", "in_coding", "out_coding", "identity_bytes", "in_bytes", "out_bytes",
	"wall_ms", "cpu_ms", "guest_ms", "equivalent", "delivered_br_bytes", "delivered_gzip_bytes",
	"delivered_br_cpu_ms", "delivered_gzip_cpu_ms"}

// WriteCSV writes one row per page and mode, after a header row.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, p := range r.Pages {
		for _, name := range ModeNames() {
			m, ok := p.Modes[name]
			if !ok {
				continue
			}
			row := []string{p.Name, name, m.In, m.Out, itoa(p.IdentityBytes), itoa(m.InBytes), itoa(m.OutBytes),
				ftoa(m.WallMS), ftoa(m.CPUMS), ftoa(m.GuestMS), strconv.FormatBool(m.Equivalent),
				itoa(p.DeliveredBytes["br"]), itoa(p.DeliveredBytes["gzip"]),
				ftoa(p.DeliveredCPUMS["br"]), ftoa(p.DeliveredCPUMS["gzip"])}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// shortModes are the table's column titles, in Modes order.
var shortModes = map[string]string{
	ModeIdentity:          "identity",
	ModeGzipMirror:        "gzip mirror",
	ModeDeflateMirror:     "deflate mirror",
	ModeBrMirror:          "br mirror",
	ModeGzipToIdentity:    "gzip→identity",
	ModeDeflateToIdentity: "deflate→identity",
	ModeBrToIdentity:      "br→identity",
}

// WriteTable writes the readable report: live fetches (if any), sizes,
// guest CPU and wall time per mode, failures and the summary.
func (r *Report) WriteTable(w io.Writer) error {
	bw := &errWriter{w: w}
	if len(r.Fetches) > 0 {
		writeFetchTable(bw, r.Fetches)
		fmt.Fprintln(bw)
	}
	st := r.Settings
	fmt.Fprintf(bw, "sizes (bytes): origin gzip/deflate level %d, br quality %d window %d; mirror output at guest gzip level %d, br quality %d; delivered = the edge on the identity output (gzip level %d, br quality %d)\n",
		st.OriginGzipLevel, st.OriginBrotliQuality, st.OriginBrotliWindow, st.GuestGzipLevel, st.GuestBrotliQuality, st.DeliveryGzipLevel, st.DeliveryBrQuality)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tidentity\torigin gzip\torigin deflate\torigin br\tgzip mirror out\tdeflate mirror out\tbr mirror out\tdelivered br\tdelivered gzip\t")
	for _, p := range r.Pages {
		sim := func(c string, n int64) string { return group(n) + p.simMark(c) }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Name, group(p.IdentityBytes),
			sim("gzip", p.OriginBytes["gzip"]), sim("deflate", p.OriginBytes["deflate"]), sim("br", p.OriginBytes["br"]),
			sim("gzip", p.Modes[ModeGzipMirror].OutBytes), sim("deflate", p.Modes[ModeDeflateMirror].OutBytes), sim("br", p.Modes[ModeBrMirror].OutBytes),
			group(p.DeliveredBytes["br"]), group(p.DeliveredBytes["gzip"]))
	}
	s := r.Summary
	fmt.Fprintf(tw, "TOTAL\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", group(s.TotalIdentityBytes),
		group(s.TotalOriginBytes["gzip"]), group(s.TotalOriginBytes["deflate"]), group(s.TotalOriginBytes["br"]),
		group(s.TotalOutBytes[ModeGzipMirror]), group(s.TotalOutBytes[ModeDeflateMirror]), group(s.TotalOutBytes[ModeBrMirror]),
		group(s.TotalDeliveredBytes["br"]), group(s.TotalDeliveredBytes["gzip"]))
	tw.Flush()

	for _, kind := range []string{"cpu", "wall"} {
		fmt.Fprintln(bw)
		if kind == "cpu" {
			fmt.Fprintf(bw, "guest CPU (ms, thread CPU time of Transform, %s, median of %d runs after a warm-up)\n", st.CPUClock, st.Runs)
		} else {
			fmt.Fprintf(bw, "guest wall time (ms, Transform, median of %d runs)\n", st.Runs)
		}
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "page\t")
		for _, n := range ModeNames() {
			fmt.Fprintf(tw, "%s\t", shortModes[n])
		}
		if kind == "cpu" {
			fmt.Fprint(tw, "edge br\tedge gzip\t")
		}
		fmt.Fprintln(tw)
		row := func(name string, get func(string) float64, edge func(string) float64, mark func(string) string) {
			fmt.Fprintf(tw, "%s\t", name)
			for _, n := range ModeNames() {
				fmt.Fprintf(tw, "%.3f%s\t", get(n), mark(n))
			}
			if kind == "cpu" {
				fmt.Fprintf(tw, "%.3f\t%.3f\t", edge("br"), edge("gzip"))
			}
			fmt.Fprintln(tw)
		}
		for _, p := range r.Pages {
			row(p.Name, func(n string) float64 {
				if kind == "cpu" {
					return p.Modes[n].CPUMS
				}
				return p.Modes[n].WallMS
			}, func(c string) float64 { return p.DeliveredCPUMS[c] }, func(n string) string {
				if p.Modes[n].Simulated {
					return simulatedMark
				}
				return ""
			})
		}
		if kind == "cpu" {
			row("MEDIAN", func(n string) float64 { return s.MedianCPUMS[n] }, func(c string) float64 { return s.MedianDeliveredCPU[c] }, noMark)
			row("TOTAL", func(n string) float64 { return s.TotalCPUMS[n] }, func(c string) float64 { return s.TotalDeliveredCPU[c] }, noMark)
		} else {
			row("MEDIAN", func(n string) float64 { return s.MedianWallMS[n] }, nil, noMark)
			row("TOTAL", func(n string) float64 { return s.TotalWallMS[n] }, nil, noMark)
		}
		tw.Flush()
	}
	fmt.Fprintln(bw)
	writeOffloadTable(bw, s)
	fmt.Fprintln(bw)
	for _, line := range originLines(r.Pages) {
		fmt.Fprintln(bw, line)
	}
	for _, line := range simulatedLines(r.Pages) {
		fmt.Fprintln(bw, line)
	}
	for _, p := range r.Pages {
		if !p.Eligible && len(p.Modes) > 0 {
			fmt.Fprintf(bw, "note: %s was not SSAT-eligible under this configuration (no slot matches %s?): no SSAT injection\n", p.Name, p.Path)
		}
	}
	for _, f := range s.Failures {
		fmt.Fprintf(bw, "NOT EQUIVALENT: %s\n", f)
	}
	fmt.Fprintln(bw, s.SummaryLine())
	return bw.err
}

// group formats n with thousands separators, as in docs/measuring.md.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// errWriter remembers the first write error so that table code can print
// freely and report once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeOffloadTable sets offload beside mirror: the guest alone (what a CDN
// in front, "external", leaves to ssatd) and guest plus builtin edge (what
// the one process spends when "builtin" compresses), for an origin that
// honours identity and for one that sends the client's coding anyway.
func writeOffloadTable(w io.Writer, s Summary) {
	fmt.Fprintln(w, "offload against mirror (ms of CPU per page, median over pages; change against mirror; bytes summed over pages)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client gets\toffload origin sends\tmirror: guest\toffload, external edge: guest\toffload, builtin edge: guest + edge\tbytes: offload delivered vs mirror out\t")
	for _, c := range deliveryCodings {
		mirror := s.MedianCPUMS[mirrorModes[c]]
		for _, mode := range offloadModes(c) {
			origin := "identity"
			if mode != ModeIdentity {
				origin = c
			}
			guest, both := s.MedianCPUMS[mode], s.MedianBuiltinCPU[builtinKey(mode, c)]
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f (%s)\t%.3f (%s)\t%s\t\n", c, origin, mirror, guest, change(guest, mirror), both, change(both, mirror), byteCell(s, c))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, offloadVerdict)
	fmt.Fprintln(w, s.VerdictLine())
}

// offloadVerdict is the reading of the offload table, the same words as
// docs/measuring.md.
const offloadVerdict = `With platform.delivery_compression = "external" a CDN compresses, so the middle column is ssatd's whole cost: offload saves CPU. With "builtin" ssatd's own edge compresses in the same process: offload moves CPU from the guest to the edge, and whatever the last column still saves comes from the edge's lower levels ([delivery]), paid for in bytes ("delivered" against "mirror out" above).`

// change is v against ref as a signed percentage.
func change(v, ref float64) string {
	if ref == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", (v/ref-1)*100)
}

// originLines say which origin each page was measured against, one line
// per origin, because only links naming that origin are rewritten.
func originLines(pages []PageResult) []string {
	var order []string
	names := map[string][]string{}
	from := map[string]string{}
	for _, p := range pages {
		if _, seen := names[p.Origin]; !seen {
			order = append(order, p.Origin)
			from[p.Origin] = p.OriginFrom
		}
		names[p.Origin] = append(names[p.Origin], p.Name)
		if from[p.Origin] != p.OriginFrom {
			from[p.Origin] = "" // several sources
		}
	}
	lines := make([]string, 0, len(order))
	for _, o := range order {
		var why string
		switch from[o] {
		case originFromConfig:
			why = "from -config"
		case originFromURL:
			why = "from -url"
		case originFromFallback:
			why = "fallback: no canonical link or og:url, so no link was rewritten"
		case "":
			why = "from the canonical link or og:url"
		default:
			why = "from the " + from[o]
		}
		lines = append(lines, fmt.Sprintf("origin %s (%s): %s", o, why, listNames(names[o])))
	}
	return lines
}

// listNames lists up to four names, then how many more.
func listNames(ns []string) string {
	if len(ns) <= 4 {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ns[:4], ", "), len(ns)-4)
}
