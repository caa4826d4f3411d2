package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// NetworkProfile is an emulated network, applied by Chromium's DevTools
// throttling (Network.emulateNetworkConditionsByRule with one global rule,
// https://chromedevtools.github.io/devtools-protocol/tot/Network#method-emulateNetworkConditionsByRule).
type NetworkProfile struct {
	Name      string  `json:"name"`
	LatencyMS float64 `json:"latency_ms"` // added before the response headers of each request
	// DownloadBps and UploadBps cap the throughput, bytes per second;
	// 0 leaves the link as it is.
	DownloadBps float64 `json:"download_bytes_per_second"`
	UploadBps   float64 `json:"upload_bytes_per_second"`
	Source      string  `json:"source,omitempty"`
}

// Throttled: the profile changes the link at all.
func (n NetworkProfile) Throttled() bool {
	return n.LatencyMS > 0 || n.DownloadBps > 0 || n.UploadBps > 0
}

// lighthouseConstants is where the throttled profiles' figures come from:
// Lighthouse's DevTools throttling presets (throttling.mobileSlow4G and
// mobileRegular3G; RTT × DEVTOOLS_RTT_ADJUSTMENT_FACTOR 3.75, throughput ×
// DEVTOOLS_THROUGHPUT_ADJUSTMENT_FACTOR 0.9, Kbps as 1024 bits), converted to
// bytes per second as its lib/emulation.js does (Math.floor(kbps * 1024 / 8)).
const lighthouseConstants = "GoogleChrome/lighthouse core/config/constants.js"

// NetworkProfiles are the names -network accepts.
var NetworkProfiles = []NetworkProfile{
	{Name: "none", Source: "no emulation: the loopback or real link as it is"},
	// Lighthouse's default mobile throttling ("Slow 4G"; WebPageTest's
	// "Mobile 3G - Fast"): 150 ms RTT, 1.6 Mbps down, 750 Kbps up.
	{Name: "slow-4g", LatencyMS: 150 * 3.75, DownloadBps: 188743, UploadBps: 86400,
		Source: lighthouseConstants + " throttling.mobileSlow4G"},
	// 300 ms RTT, 700 Kbps both ways.
	{Name: "regular-3g", LatencyMS: 300 * 3.75, DownloadBps: 80640, UploadBps: 80640,
		Source: lighthouseConstants + " throttling.mobileRegular3G"},
}

// ParseNetworks reads -network: comma-separated profile names, each once.
func ParseNetworks(list string) ([]NetworkProfile, error) {
	var out []NetworkProfile
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(NetworkProfiles, func(n NetworkProfile) bool { return n.Name == name })
		switch {
		case i < 0:
			return nil, fmt.Errorf("-network: unknown profile %q (known: %s)", name, networkNames())
		case slices.ContainsFunc(out, func(n NetworkProfile) bool { return n.Name == name }):
			return nil, fmt.Errorf("-network: %q is named twice", name)
		}
		out = append(out, NetworkProfiles[i])
	}
	return out, nil
}

func networkNames() string {
	names := make([]string, len(NetworkProfiles))
	for i, n := range NetworkProfiles {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}

// chromiumNames are the binaries looked for on PATH when -chrome is not
// given, as the repository's browser tests look for them.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindChromium returns path when set (it must exist), else the first of
// chromiumNames on PATH.
func FindChromium(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("-chrome %s: %w", path, err)
		}
		return p, nil
	}
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("-browser: none of %s is on PATH; install Chromium or give -chrome PATH", strings.Join(chromiumNames, ", "))
}

// Vitals are the figures of one load of a page, in ms from the
// navigation's start where they are times (see BrowserLoad, which keeps
// their medians).
type Vitals struct {
	TTFB, ResponseEnd, Load    float64 // Navigation Timing responseStart, responseEnd, loadEventEnd
	Transfer, Encoded, Decoded int64   // transferSize, encodedBodySize, decodedBodySize
	FCP, LCP                   float64
	// Status, Coding (Content-Encoding, "" when absent) and Wait
	// (sendEnd → receiveHeadersEnd) are the document's response as
	// DevTools reports it.
	Status int
	Coding string
	Wait   float64
}

// A Browser is a started headless browser that -browser loads pages in.
// Package chromium drives Chromium through DevTools; it lives apart so
// that a binary without -browser (ssatd, which serves) links no browser
// tooling.
type Browser interface {
	// Product is the browser's product and version, e.g. "Chrome/148.0".
	Product() string
	// Load loads u once in a fresh browser context with the cache
	// disabled, sending acceptEncoding, over network n, within timeout.
	Load(u, acceptEncoding string, n NetworkProfile, timeout time.Duration) (Vitals, error)
	// Close ends the browser and everything it started.
	Close()
}

// A Launcher starts the Browser at bin; hostRules, when not "", are
// Chromium's --host-resolver-rules.
type Launcher func(ctx context.Context, bin, hostRules string) (Browser, error)

// BrowserOptions are -browser's settings.
type BrowserOptions struct {
	Launch   Launcher
	ExecPath string // the Chromium binary
	Networks []NetworkProfile
	Runs     int           // timed loads per mode, client coding and network
	Timeout  time.Duration // per load
}

// BrowserLoad is one mode, client Accept-Encoding and network, loaded in
// Chromium. Times are medians over the loads, in ms from the navigation's
// start (PerformanceNavigationTiming.startTime, 0 for a navigation).
type BrowserLoad struct {
	Mode           string `json:"mode"`
	AcceptEncoding string `json:"accept_encoding"` // the client coding, as in the HTTP rows
	// SentAcceptEncoding is the header Chromium sent in place of its own
	// (browserAcceptEncoding).
	SentAcceptEncoding string `json:"sent_accept_encoding"`
	Network            string `json:"network"`
	Status             int    `json:"status"`
	// DeliveredCoding is the document's Content-Encoding as Chromium
	// received it.
	DeliveredCoding string `json:"delivered_coding"`
	// TransferBytes is PerformanceNavigationTiming.transferSize (headers
	// and body as fetched); the body sizes are encodedBodySize and
	// decodedBodySize.
	TransferBytes    int64 `json:"transfer_bytes"`
	EncodedBodyBytes int64 `json:"encoded_body_bytes"`
	DecodedBodyBytes int64 `json:"decoded_body_bytes"`
	// TTFBMS is PerformanceNavigationTiming.responseStart: redirects,
	// connection set-up (every load has a fresh context, so a fresh
	// connection), request and the wait for the first response byte, as
	// web-vitals defines TTFB and as the page's own scripts see it.
	// Chromium's network emulation delays the response after this point,
	// so it does not include the emulated latency: WaitMS does.
	TTFBMS float64 `json:"ttfb_ms"`
	// WaitMS is sendEnd → receiveHeadersEnd of the document in DevTools'
	// ResourceTiming (the Network panel's "Waiting for server response"),
	// the emulated latency included.
	WaitMS float64 `json:"wait_ms"`
	// FCPMS is the paint timing entry first-contentful-paint.
	FCPMS float64 `json:"fcp_ms"`
	// LCPMS is the last largest-contentful-paint entry reported by the time
	// the load event has fired and two more frames have run.
	LCPMS         float64 `json:"lcp_ms"`
	ResponseEndMS float64 `json:"response_end_ms"` // the document's last byte
	LoadMS        float64 `json:"load_ms"`         // loadEventEnd
	Loads         int     `json:"loads"`
}

// BrowserRun is -browser's result for one deployment.
type BrowserRun struct {
	Browser  string           `json:"browser"` // product and version, from Browser.getVersion
	Networks []NetworkProfile `json:"networks"`
	Runs     int              `json:"runs"`
	Loads    []BrowserLoad    `json:"loads"`
}

// Browse loads proxyURL+path in the browser o.Launch starts for every mode of
// daemonModes, client coding of daemonEncodings and network of o, o.Runs
// times each after one warm-up load, each in a fresh browser context
// (no cache, cookies or connections carried over) with the cache disabled.
// host, when it is not the proxy's host, is the name Chromium navigates
// to, resolved to the proxy's address (--host-resolver-rules), so that
// the page's own links to it reach the proxy too.
func Browse(ctx context.Context, proxyURL, path, host string, o BrowserOptions) (*BrowserRun, error) {
	if o.Runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, got %d", o.Runs)
	}
	if len(o.Networks) == 0 {
		return nil, errors.New("no network profile")
	}
	base, err := url.Parse(strings.TrimSuffix(proxyURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("-proxy %q is not an http(s) URL", proxyURL)
	}
	mapped, rule := browserHost(base, host)
	b, err := o.Launch(ctx, o.ExecPath, rule)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	run := &BrowserRun{Browser: b.Product(), Networks: o.Networks, Runs: o.Runs}
	target := func(mode string) (string, error) {
		u, err := overrideURL(proxyURL, path, mode)
		if err != nil || mapped == "" {
			return u, err
		}
		pu, _ := url.Parse(u)
		pu.Host = mapped
		return pu.String(), nil
	}
	warm, err := target(daemonModes[0].override)
	if err != nil {
		return nil, err
	}
	if _, err := b.Load(warm, browserAcceptEncoding(daemonEncodings[0]), NetworkProfiles[0], o.Timeout); err != nil {
		return nil, fmt.Errorf("warm-up load of %s: %w", warm, err)
	}
	for _, m := range daemonModes {
		u, err := target(m.override)
		if err != nil {
			return nil, err
		}
		for _, ae := range daemonEncodings {
			for _, n := range o.Networks {
				l, err := loadMedian(b, u, ae, n, o)
				if err != nil {
					return nil, fmt.Errorf("%s (Accept-Encoding %s, network %s): %w", u, ae, n.Name, err)
				}
				l.Mode = m.override
				run.Loads = append(run.Loads, l)
			}
		}
	}
	return run, nil
}

// browserHost returns the host[:port] Chromium navigates to and the
// --host-resolver-rules sending it to the proxy, or "" for both when host
// is empty or already the proxy's. The mapped name keeps the scheme's
// default port, so the Host header is host alone, as -proxy sends it.
func browserHost(base *url.URL, host string) (string, string) {
	if host == "" || strings.EqualFold(host, base.Host) || strings.EqualFold(host, base.Hostname()) {
		return "", ""
	}
	port := base.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[base.Scheme]
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	return name, fmt.Sprintf("MAP %s %s", name, net.JoinHostPort(base.Hostname(), port))
}
