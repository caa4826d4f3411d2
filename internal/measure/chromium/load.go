package chromium

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/measure"
)

// vitalsObserver runs in every document before the page's own scripts and
// keeps the latest largest-contentful-paint candidate
// (https://w3c.github.io/largest-contentful-paint/): LCP is only known
// from the entries reported so far.
const vitalsObserver = `(() => {
  window.__ssatdLCP = 0;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__ssatdLCP = e.startTime;
    }).observe({type: 'largest-contentful-paint', buffered: true});
  } catch (e) {}
})()`

// vitalsReady: the load event has ended and the first contentful paint and
// an LCP candidate are reported.
const vitalsReady = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return !!nav && nav.loadEventEnd > 0 &&
    performance.getEntriesByName('first-contentful-paint').length > 0 &&
    window.__ssatdLCP > 0;
})()`

// twoFrames waits for two animation frames, so that an LCP candidate
// painted with the load is reported.
const twoFrames = `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))`

// vitalsRead reads the figures, all relative to the navigation's start.
const vitalsRead = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  return {ttfb: nav.responseStart, responseEnd: nav.responseEnd, load: nav.loadEventEnd,
    transfer: nav.transferSize, encoded: nav.encodedBodySize, decoded: nav.decodedBodySize,
    fcp: fcp ? fcp.startTime : 0, lcp: window.__ssatdLCP || 0};
})()`

// vitals is what vitalsRead returns.
type vitals struct {
	TTFB        float64 `json:"ttfb"`
	ResponseEnd float64 `json:"responseEnd"`
	Load        float64 `json:"load"`
	Transfer    int64   `json:"transfer"`
	Encoded     int64   `json:"encoded"`
	Decoded     int64   `json:"decoded"`
	FCP         float64 `json:"fcp"`
	LCP         float64 `json:"lcp"`
}

// loadOnce loads u in a new browser context (a new tab in a new
// incognito-like profile, closed afterwards) with the cache disabled,
// Accept-Encoding acceptEncoding and network n.
func loadOnce(browserCtx context.Context, u, acceptEncoding string, n measure.NetworkProfile, timeout time.Duration) (measure.Vitals, error) {
	var v measure.Vitals
	tab, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	defer func() {
		_ = chromedp.Cancel(tab)
		cancelTab()
	}()
	// The first Run creates the tab, which lives as long as this context:
	// it must not be the timed one.
	if err := chromedp.Do(tab); err != nil {
		return v, err
	}
	ctx, cancel := context.WithTimeout(tab, timeout)
	defer cancel()
	setup := []chromedp.Action[chromedp.Void]{
		call(network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}),
		call(network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Encoding": acceptEncoding}}),
		call(page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: vitalsObserver}),
	}
	if n.Throttled() {
		setup = append(setup, call(emulateNetwork, emulateNetworkParams{
			EmulateNetworkConditionsByRuleParams: network.EmulateNetworkConditionsByRuleParams{
				MatchedNetworkConditions: []*network.Conditions{{
					Latency: n.LatencyMS, DownloadThroughput: orUnlimited(n.DownloadBps), UploadThroughput: orUnlimited(n.UploadBps),
				}},
			},
		}))
	}
	if err := chromedp.Do(ctx, setup...); err != nil {
		return v, fmt.Errorf("setting up the tab: %w", err)
	}
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		return v, err
	}
	if resp != nil {
		v.Status = int(resp.Status)
		v.Coding = header(resp.Headers, "Content-Encoding")
		if t := resp.Timing; t != nil && t.ReceiveHeadersEnd > 0 {
			v.Wait = t.ReceiveHeadersEnd - t.SendEnd
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](vitalsReady, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		return v, fmt.Errorf("waiting for the load event, first-contentful-paint and largest-contentful-paint: %w", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](twoFrames, chromedp.EvalAwaitPromise)); err != nil {
		return v, err
	}
	r, err := chromedp.Run(ctx, chromedp.Evaluate[vitals](vitalsRead))
	if err != nil {
		return v, err
	}
	v.TTFB, v.ResponseEnd, v.Load = r.TTFB, r.ResponseEnd, r.Load
	v.Transfer, v.Encoded, v.Decoded = r.Transfer, r.Encoded, r.Decoded
	v.FCP, v.LCP = r.FCP, r.LCP
	return v, nil
}

// call is a protocol command as an action.
func call[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cmd, params)
		return err
	})
}

// emulateNetworkParams are Network.emulateNetworkConditionsByRule's
// parameters in both protocol versions: Chromium 148 requires a top-level
// offline, which later protocol versions (cdproto v0.159) moved into each
// rule; each version ignores the other's field. The deprecated
// Network.emulateNetworkConditions, which this command replaces, is gone
// from cdproto.
type emulateNetworkParams struct {
	Offline bool `json:"offline"`
	network.EmulateNetworkConditionsByRuleParams
}

var emulateNetwork = cdp.Command[emulateNetworkParams, network.EmulateNetworkConditionsByRuleResult]{Method: network.CommandEmulateNetworkConditionsByRule}

// orUnlimited is a throughput for the protocol: -1 disables throttling.
func orUnlimited(bps float64) float64 {
	if bps <= 0 {
		return -1
	}
	return bps
}

// header reads name from protocol headers, case-insensitively.
func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return ""
}
