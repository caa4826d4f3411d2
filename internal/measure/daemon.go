package measure

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/pageparse"
	"github.com/ssatd/ssatd/internal/proxy"
)

// DaemonResult is one (mode, client Accept-Encoding) pair measured over
// HTTP against a running daemon. Times are medians over the runs.
type DaemonResult struct {
	Mode            string  `json:"mode"`            // requested with the override: identity or mirror
	AcceptEncoding  string  `json:"accept_encoding"` // the client's
	Status          int     `json:"status"`          //
	DiagMode        string  `json:"diag_mode"`       // offload or mirror (x-ts-ssat-compression-mode identity reads as offload)
	OriginAE        string  `json:"origin_accept_encoding"`
	OriginCoding    string  `json:"origin_coding"`
	OutputCoding    string  `json:"output_coding"`    // what the guest emitted
	Delivery        string  `json:"delivery"`         // who compressed for the client
	DeliveredCoding string  `json:"delivered_coding"` // Content-Encoding the client got
	DeliveredBytes  int64   `json:"delivered_bytes"`
	DecodedBytes    int64   `json:"decoded_bytes"`
	ProcessedBytes  int64   `json:"processed_bytes"` // trailer
	TTFBMS          float64 `json:"ttfb_ms"`
	TotalMS         float64 `json:"total_ms"`
	ProcessingMS    float64 `json:"processing_ms"` // trailer X-Ssatd-Processing-Ms
	VCPUMS          float64 `json:"vcpu_ms"`       // x-ts-ssat-fastly-vcpu-ms, else X-Ssatd-Guest-Cpu-Ms
	// GuestCPUMS is ssatd's own X-Ssatd-Guest-Cpu-Ms trailer (thread CPU ×
	// compute.cpu_scale, to the microsecond), where VCPUMS may hold the
	// whole milliseconds of x-ts-ssat-fastly-vcpu-ms; nil when not sent.
	GuestCPUMS *float64 `json:"guest_cpu_ms"`
	// SameAsFirst: the decoded page equals the first pair's once the bids
	// script, whose bids differ between auctions, is set aside on both
	// (pageparse.WithoutBids, as `ssatd verify` compares codings); Differs
	// otherwise says where and what differs. BodySHA256 is of the page
	// with the bids set aside too, so that deployments compare alike.
	SameAsFirst bool   `json:"same_as_first"`
	Differs     string `json:"differs,omitempty"`
	BodySHA256  string `json:"body_sha256,omitempty"`
	// Headers says which set was read: "x-ts-ssat" (Trusted Server's, on
	// Fastly or ssatd) or "x-ssatd".
	Headers string `json:"headers"`
}

// DaemonReport is the -proxy result.
type DaemonReport struct {
	Proxy    string         `json:"proxy"`
	Path     string         `json:"path"`
	Runs     int            `json:"runs"`
	Results  []DaemonResult `json:"results"`
	Problems []string       `json:"problems,omitempty"`
	// Browser is -browser's loads of the same page in Chromium; absent
	// without -browser.
	Browser *BrowserRun `json:"browser,omitempty"`
}

// daemonModes are the override values and the mode the daemon must then
// report.
var daemonModes = []struct{ override, diag string }{{"identity", "offload"}, {"mirror", "mirror"}}

// daemonEncodings are the client Accept-Encoding values tried.
var daemonEncodings = []string{"br", "gzip"}

// debugAdvice is the fix when the daemon is not set up for -proxy.
const debugAdvice = "on ssatd turn on debug.diagnostics_headers = true ([debug] in the daemon's configuration, or SSATD_DEBUG_DIAGNOSTICS_HEADERS=true); on Trusted Server deploy the build that answers ?__ts_ssat_compression with x-ts-ssat-* headers; and measure an SSAT-eligible page (a slot must match PATH)"

// checkDiagnostics stops the measurement at the first response that shows
// the daemon is not set up for it: every other request would fail the
// same way.
func checkDiagnostics(res DaemonResult, want string) error {
	switch {
	case res.DiagMode == "":
		return fmt.Errorf("the daemon answered %d with neither %s nor %s: %s", res.Status, proxy.TSMode, proxy.DiagMode, debugAdvice)
	case res.DiagMode != want:
		return fmt.Errorf("the daemon ran mode %s where the override asked for %s, so the override was ignored: %s", res.DiagMode, want, debugAdvice)
	}
	return nil
}

// overrideURL is proxyURL+path with the mode override parameter added.
func overrideURL(proxyURL, path, mode string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(proxyURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", fmt.Errorf("-proxy %q is not an http(s) URL", proxyURL)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	ref, err := url.Parse(path)
	if err != nil {
		return "", fmt.Errorf("-url %q: %v", path, err)
	}
	q := ref.Query()
	q.Set(proxy.TSModeParam, mode)
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + ref.Path
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Daemon measures a running daemon over HTTP. host, when not empty, is
// sent as the Host header (the publisher domain).
func Daemon(ctx context.Context, client *http.Client, proxyURL, path, host string, runs int) (*DaemonReport, error) {
	if runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, got %d", runs)
	}
	rep := &DaemonReport{Proxy: proxyURL, Path: path, Runs: runs}
	var first []byte
	for _, m := range daemonModes {
		target, err := overrideURL(proxyURL, path, m.override)
		if err != nil {
			return nil, err
		}
		for _, ae := range daemonEncodings {
			res := DaemonResult{Mode: m.override, AcceptEncoding: ae}
			var ttfbs, totals, procs, vcpus, cpus []float64
			var body []byte
			for run := 0; run <= runs; run++ { // run 0 warms up
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
				if err != nil {
					return nil, err
				}
				if host != "" {
					req.Host = host
				}
				req.Header.Set("Sec-Fetch-Dest", "document")
				req.Header.Set("Accept", "text/html")
				req.Header.Set("Accept-Encoding", ae)
				resp, raw, ttfb, total, err := timedGet(client, req)
				if err != nil {
					return nil, fmt.Errorf("GET %s (Accept-Encoding %s): %w", target, ae, err)
				}
				d := readDiag(resp)
				if run == 0 {
					res.Status = resp.StatusCode
					res.Headers, res.DiagMode = d.set, d.mode
					res.OriginAE, res.OriginCoding, res.OutputCoding, res.Delivery = d.originAE, d.originCoding, d.outputCoding, d.delivery
					res.DeliveredCoding = orIdentity(resp.Header.Get("Content-Encoding"))
					res.DeliveredBytes = int64(len(raw))
					res.ProcessedBytes = d.processedBytes
					body = raw
					if err := checkDiagnostics(res, m.diag); err != nil {
						return nil, err
					}
					continue
				}
				ttfbs = append(ttfbs, ms(ttfb))
				totals = append(totals, ms(total))
				procs = append(procs, d.processingMS)
				vcpus = append(vcpus, d.vcpuMS)
				if c, err := strconv.ParseFloat(field(resp, proxy.DiagGuestCPUMillis), 64); err == nil {
					cpus = append(cpus, c)
				}
			}
			res.TTFBMS, res.TotalMS, res.ProcessingMS, res.VCPUMS = Median(ttfbs), Median(totals), Median(procs), Median(vcpus)
			if len(cpus) > 0 {
				c := Median(cpus)
				res.GuestCPUMS = &c
			}
			if c, ok := compress.ParseContentEncoding(res.DeliveredCoding); ok {
				if plain, err := decodeAll(c, body); err == nil {
					res.DecodedBytes = int64(len(plain))
					page := pageparse.WithoutBids(plain)
					if first == nil {
						first = page
					}
					res.SameAsFirst = bytes.Equal(page, first)
					if !res.SameAsFirst {
						res.Differs = describeDifference(first, page)
					}
					sum := sha256.Sum256(page)
					res.BodySHA256 = hex.EncodeToString(sum[:])
				} else {
					rep.Problems = append(rep.Problems, fmt.Sprintf("mode %s, Accept-Encoding %s: decode %s: %v", m.override, ae, c, err))
				}
			}
			rep.Results = append(rep.Results, res)
		}
	}
	return rep, nil
}

// describeDifference says where b first differs from a, how many bytes
// differ, and what each holds there, so that a report names the dynamic
// part of a page (a date, a counter, a token) instead of guessing.
func describeDifference(a, b []byte) string {
	p := firstDiff(a, b)
	return fmt.Sprintf("%d bytes differ from byte %d: first %s, this %s", differingBytes(a, b), p, excerpt(a, p), excerpt(b, p))
}

// excerpt is a window of b around offset p between brackets, with "…"
// where cut; line breaks and tabs are written as \n, \r and \t to keep the
// note on one line, the page's own quotes and backslashes as they are.
func excerpt(b []byte, p int) string {
	const before, after = 24, 40
	lo, hi := max(p-before, 0), min(p+after, len(b))
	s := "[" + excerptEscapes.Replace(strings.ToValidUTF8(string(b[lo:hi]), "\uFFFD")) + "]"
	if lo > 0 {
		s = "…" + s
	}
	if hi < len(b) {
		s += "…"
	}
	return s
}

var excerptEscapes = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func decodeAll(c compress.Coding, b []byte) ([]byte, error) {
	dec, err := compress.NewReader(c, bytes.NewReader(b), 1<<30)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return io.ReadAll(dec)
}

func orIdentity(s string) string {
	if s == "" {
		return "identity"
	}
	return s
}

// WriteTable writes the -proxy report.
func (r *DaemonReport) WriteTable(w io.Writer) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "daemon %s, page %s: median of %d requests after a warm-up\n", r.Proxy, r.Path, r.Runs)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tclient AE\tstatus\tguest mode\torigin AE\torigin coding\tguest output\tdelivery\tdelivered coding\tdelivered B\tdecoded B\tttfb ms\ttotal ms\tprocessing ms\tvCPU ms\tguest CPU ms\t")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.3f\t%.0f\t%s\t\n", x.Mode, x.AcceptEncoding, x.Status,
			dash(x.DiagMode), dash(x.OriginAE), dash(x.OriginCoding), dash(x.OutputCoding), dash(x.Delivery),
			x.DeliveredCoding, group(x.DeliveredBytes), group(x.DecodedBytes), x.TTFBMS, x.TotalMS, x.ProcessingMS, x.VCPUMS, guestCPU(x.GuestCPUMS, "-"))
	}
	tw.Flush()
	r.writeBrowserTable(bw)
	for _, x := range r.Results {
		if !x.SameAsFirst && x.DecodedBytes > 0 {
			fmt.Fprintf(bw, "note: mode %s, Accept-Encoding %s: the decoded page differs from the first response beyond its bids: %s\n", x.Mode, x.AcceptEncoding, x.Differs)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(bw, "PROBLEM: %s\n", p)
	}
	return bw.err
}

// WriteJSON writes the -proxy report as JSON.
func (r *DaemonReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"daemon": r})
}

// WriteCSV writes one row per mode and client Accept-Encoding.
func (r *DaemonReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"mode", "accept_encoding", "status", "diag_mode", "origin_accept_encoding", "origin_coding", "output_coding",
		"delivery", "delivered_coding", "delivered_bytes", "decoded_bytes", "ttfb_ms", "total_ms", "processing_ms", "vcpu_ms", "guest_cpu_ms"})
	for _, x := range r.Results {
		_ = cw.Write([]string{x.Mode, x.AcceptEncoding, strconv.Itoa(x.Status), x.DiagMode, x.OriginAE, x.OriginCoding, x.OutputCoding,
			x.Delivery, x.DeliveredCoding, itoa(x.DeliveredBytes), itoa(x.DecodedBytes), ftoa(x.TTFBMS), ftoa(x.TotalMS), ftoa(x.ProcessingMS), ftoa(x.VCPUMS), guestCPU(x.GuestCPUMS, "")})
	}
	cw.Flush()
	return cw.Error()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// guestCPU formats a guest CPU figure the daemon may not have sent.
func guestCPU(v *float64, missing string) string {
	if v == nil {
		return missing
	}
	return ftoa(*v)
}
