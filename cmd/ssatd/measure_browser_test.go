package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/measure"
	"github.com/ssatd/ssatd/internal/testutil"
)

// largePage is measurePage with the base64 of noise in a paragraph: it
// compresses to about three quarters of its size in any coding, so what
// crosses the emulated link stays large.
func largePage(host string, noise []byte) []byte {
	return measurePage(host, `<p id="noise">`+base64.StdEncoding.EncodeToString(noise)+`</p>`)
}

// checkLoad asserts what holds for every load by construction: the figures
// are there, the first byte comes before the first paint (a page paints
// nothing it has not received), the largest paint is not before the first
// one, and the document ends after it starts and before its load event.
// The page Chromium decoded is the one the HTTP client decoded, in the same
// coding and size (the coded size may differ: the builtin edge's output
// depends on when the guest flushes).
func checkLoad(t *testing.T, l measure.BrowserLoad, x measure.DaemonResult) {
	t.Helper()
	name := l.Mode + "/" + l.AcceptEncoding + "/" + l.Network
	if l.Status != 200 || l.Loads < 1 {
		t.Errorf("%s: status %d, %d loads", name, l.Status, l.Loads)
	}
	if l.TTFBMS <= 0 || l.WaitMS <= 0 || l.FCPMS <= 0 || l.LCPMS <= 0 || l.ResponseEndMS <= 0 || l.LoadMS <= 0 {
		t.Errorf("%s: a figure is missing: %+v", name, l)
	}
	if l.TTFBMS > l.FCPMS || l.LCPMS < l.FCPMS || l.ResponseEndMS < l.TTFBMS || l.LoadMS < l.ResponseEndMS {
		t.Errorf("%s: out of order: ttfb %.1f fcp %.1f lcp %.1f response end %.1f load %.1f", name, l.TTFBMS, l.FCPMS, l.LCPMS, l.ResponseEndMS, l.LoadMS)
	}
	if l.DeliveredCoding != x.DeliveredCoding || l.EncodedBodyBytes <= 0 || l.DecodedBodyBytes != x.DecodedBytes {
		t.Errorf("%s: Chromium got %s, %d bytes decoded to %d; the HTTP client %s, %d bytes decoded to %d", name,
			l.DeliveredCoding, l.EncodedBodyBytes, l.DecodedBodyBytes, x.DeliveredCoding, x.DeliveredBytes, x.DecodedBytes)
	}
	if l.TransferBytes <= l.EncodedBodyBytes {
		t.Errorf("%s: transfer %d bytes, body %d: the headers are missing", name, l.TransferBytes, l.EncodedBodyBytes)
	}
}

// -proxy -browser against an in-process ssatd: each mode and client coding
// is loaded in Chromium over no emulation and over slow-4g. The throttled
// loads of a 0.7 MB page take at least the emulated latency plus the time
// its body needs at the emulated throughput: the throttle delivers no
// byte earlier, however slow or fast the machine is. Nothing is asserted
// of the unthrottled loads' times but their internal order.
func TestMeasureProxyInBrowser(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	noise := make([]byte, 512<<10)
	_, _ = rand.Read(noise)
	var host string
	origin := measureOrigin(t, func() []byte { return largePage(host, noise) }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	front := measureDaemon(t, origin.URL, func(c *config.Config) { c.Debug.DiagnosticsHeaders = true })

	code, stdout, stderr := measureBrowserRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1",
		"-browser", "-network", "none,slow-4g", "-chrome", bin, "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Daemon measure.DaemonReport }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	rep := doc.Daemon
	if rep.Browser == nil || len(rep.Browser.Loads) != 8 || !strings.HasPrefix(rep.Browser.Browser, "Chrome/") {
		t.Fatalf("browser run %+v", rep.Browser)
	}
	slow := rep.Browser.Networks[1]
	if slow.Name != "slow-4g" || slow.DownloadBps <= 0 || slow.LatencyMS <= 0 {
		t.Fatalf("networks %+v", rep.Browser.Networks)
	}
	seen := map[string]bool{}
	for _, l := range rep.Browser.Loads {
		seen[l.Mode+"/"+l.AcceptEncoding+"/"+l.Network] = true
		var x measure.DaemonResult
		for _, r := range rep.Results {
			if r.Mode == l.Mode && r.AcceptEncoding == l.AcceptEncoding {
				x = r
			}
		}
		checkLoad(t, l, x)
		if l.EncodedBodyBytes < 450<<10 {
			t.Fatalf("%s/%s: %d bytes delivered: the page compressed too well to load slowly", l.Mode, l.AcceptEncoding, l.EncodedBodyBytes)
		}
		switch l.Network {
		case "slow-4g":
			// The throttle's own granularity is a packet; 5 % of the
			// bound is far above it.
			floor := 0.95 * (slow.LatencyMS + float64(l.EncodedBodyBytes)/slow.DownloadBps*1000)
			if l.ResponseEndMS < floor || l.WaitMS < slow.LatencyMS {
				t.Errorf("%s/%s over slow-4g: response end %.0f ms, wait %.0f ms; %d bytes at %.0f B/s after %.1f ms cannot end before %.0f ms",
					l.Mode, l.AcceptEncoding, l.ResponseEndMS, l.WaitMS, l.EncodedBodyBytes, slow.DownloadBps, slow.LatencyMS, floor)
			}
			t.Logf("%s/%s slow-4g: response end %.0f ms (at least %.0f), fcp %.0f, lcp %.0f", l.Mode, l.AcceptEncoding, l.ResponseEndMS, floor, l.FCPMS, l.LCPMS)
		case "none":
			t.Logf("%s/%s none: response end %.0f ms, fcp %.0f, lcp %.0f", l.Mode, l.AcceptEncoding, l.ResponseEndMS, l.FCPMS, l.LCPMS)
		}
	}
	if len(seen) != 8 {
		t.Errorf("loads %v, want every mode, client coding and network once", seen)
	}
}

// -browser with several deployments loads each one's page: ssatd and a
// server speaking Trusted Server's headers, side by side in the table.
func TestMeasureProxyComparesDeploymentsInBrowser(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	ssatd := measureDaemon(t, origin.URL, func(c *config.Config) { c.Debug.DiagnosticsHeaders = true })
	fastly := upstreamLike(t, measurePage("elsewhere.example", ""))
	args := []string{"-proxy", ssatd.URL + "," + fastly.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1",
		"-browser", "-network", "none", "-chrome", bin}
	code, stdout, stderr := measureBrowserRun(t, append(args, "-format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Comparison measure.Comparison }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Comparison.Deployments) != 2 {
		t.Fatalf("deployments %+v", doc.Comparison.Deployments)
	}
	for _, d := range doc.Comparison.Deployments {
		if d.Browser == nil || len(d.Browser.Loads) != 4 {
			t.Fatalf("%s: browser run %+v", d.Proxy, d.Browser)
		}
		for _, l := range d.Browser.Loads {
			for _, x := range d.Results {
				if x.Mode == l.Mode && x.AcceptEncoding == l.AcceptEncoding {
					checkLoad(t, l, x)
				}
			}
		}
	}
	code, table, stderr := measureBrowserRun(t, args...)
	if code != 0 || !strings.Contains(table, "[2] "+fastly.URL+" in a browser:") || !strings.Contains(table, "none (no emulation)") {
		t.Fatalf("table (exit %d):\n%s\n%s", code, table, stderr)
	}
}
