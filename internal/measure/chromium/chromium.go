// Package chromium is the browser of `ssatd-measure -browser`: headless
// Chromium driven through the DevTools protocol (chromedp). It lives apart
// from package measure so that the binary that serves (cmd/ssatd) links no
// browser tooling; cmd/ssatd-measure wires Launch into measure.Command.
package chromium

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/measure"
)

// Launch is a measure.Launcher: it starts Chromium at bin with hostRules
// as its --host-resolver-rules, when not "".
func Launch(ctx context.Context, bin, hostRules string) (measure.Browser, error) {
	var extra []chromedp.ExecAllocatorOption
	if hostRules != "" {
		extra = append(extra, chromedp.Flag("host-resolver-rules", hostRules))
	}
	browserCtx, product, stop, err := Start(ctx, bin, extra...)
	if err != nil {
		return nil, err
	}
	return &session{ctx: browserCtx, product: product, stop: stop}, nil
}

// session is a started Chromium.
type session struct {
	ctx     context.Context // the browser's: each load opens a new context in it
	product string
	stop    func()
}

func (s *session) Product() string { return s.product }
func (s *session) Close()          { s.stop() }

func (s *session) Load(u, acceptEncoding string, n measure.NetworkProfile, timeout time.Duration) (measure.Vitals, error) {
	return loadOnce(s.ctx, u, acceptEncoding, n, timeout)
}

// browserStarts is how many times Start launches Chromium before
// it gives up. On a loaded machine Chromium now and then exits during
// start-up with nothing but its crash handler's warnings on stderr (seen
// beside `go test -race` of other packages); a launch that fails says
// nothing of the pages, so it is tried again. A page load is never
// retried.
const browserStarts = 3

// Start launches the headless Chromium at bin with chromiumFlags
// and extra after them, in a new profile directory, and asks for its
// version (product). A launch that fails is tried again, browserStarts
// times in all. stop closes the browser, waits for the process and removes
// the directory, so that nothing outlives the measurement. The browser
// tests of cmd/ssatd start Chromium through it too, so that they and
// -browser launch it one way.
func Start(ctx context.Context, bin string, extra ...chromedp.ExecAllocatorOption) (browserCtx context.Context, product string, stop func(), err error) {
	var errs []error
	for range browserStarts {
		browserCtx, product, stop, err = startBrowserOnce(ctx, bin, extra)
		if err == nil || ctx.Err() != nil {
			return browserCtx, product, stop, err
		}
		errs = append(errs, err)
	}
	return nil, "", nil, fmt.Errorf("starting %s, %d times: %w", bin, browserStarts, errors.Join(errs...))
}

func startBrowserOnce(ctx context.Context, bin string, extra []chromedp.ExecAllocatorOption) (context.Context, string, func(), error) {
	dir, err := os.MkdirTemp("", "ssatd-measure-chromium-")
	if err != nil {
		return nil, "", nil, err
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromiumFlags(bin, dir), extra...)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() {
		_ = chromedp.Cancel(browserCtx)
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	version, err := chromedp.CallBrowser(browserCtx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	return browserCtx, version.Product, stop, nil
}

// chromiumFlags start a headless Chromium that measures the same way each
// time: no first-run or background work, no QUIC (a fresh context has no
// Alt-Svc to upgrade with), and no HTTPS-Upgrades (an http:// navigation
// to a mapped name must not try https first).
func chromiumFlags(bin, dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-features", "HttpsUpgrades"),
		chromedp.WindowSize(1280, 1000),
		chromedp.UserDataDir(dir),
	}
	// Chromium refuses to start as root with its sandbox on.
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}
