package main

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"go.uber.org/zap/zaptest"
)

// startTestDemo runs the whole demo in-process on free loopback ports and
// stops it when the test ends.
func startTestDemo(t *testing.T) *demoRun {
	t.Helper()
	return startTestDemoWith(t, demoOptions{})
}

// startTestDemoWith is startTestDemo with o's other flags (-tls, -cert-dir).
func startTestDemoWith(t *testing.T, o demoOptions) *demoRun {
	t.Helper()
	o.addr, o.shutdownTimeout = "127.0.0.1", 2*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	d, err := startDemo(ctx, o, zaptest.NewLogger(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		done := make(chan error, 1)
		go func() { done <- d.wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo stopped with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("demo did not stop within 10s of cancellation")
		}
	})
	return d
}

// navigate fetches url as a browser navigation would, without decoding, and
// returns the response and the decoded body.
func navigate(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	switch ce := resp.Header.Get("Content-Encoding"); ce {
	case "":
	case "gzip":
		if r, err = gzip.NewReader(resp.Body); err != nil {
			t.Fatal(err)
		}
	case "br":
		r = brotli.NewReader(resp.Body)
	default:
		t.Fatalf("%s: unexpected Content-Encoding %q", url, ce)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: reading the body: %v", url, err)
	}
	return resp, body
}

// auctionID is the auction's mark in the demo bidder's bid ids and
// creatives (demo.BidResponseFor).
var auctionID = regexp.MustCompile(`-[0-9a-f]{6}\b`)

// pageEvents is what a tab reported while loading one page.
type pageEvents struct {
	mu       sync.Mutex
	url      string
	document *network.Response // the response of url as a document
	errors   []string          // exceptions, console.error calls, error log entries
}

func (e *pageEvents) listen(ev any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.Response != nil && ev.Response.URL == e.url {
			e.document = ev.Response
		}
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			text += " " + ev.ExceptionDetails.Exception.Description
		}
		e.errors = append(e.errors, "exception: "+text)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			e.errors = append(e.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			e.errors = append(e.errors, "log: "+string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	}
}

func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// renderedFrame is one creative iframe the bundle rendered.
type renderedFrame struct {
	Div     string `json:"div"`
	W       string `json:"w"`
	H       string `json:"h"`
	Sandbox string `json:"sandbox"`
	Srcdoc  string `json:"srcdoc"`
	Bid     string `json:"bid"` // the container's data-tsjs-bid: seat, bid id, hb_pb
}

// framesJS lists the creative iframes in slot containers as renderedFrame.
const framesJS = `Array.prototype.map.call(document.querySelectorAll("[data-tsjs-rendered] > iframe"), function (f) {
	return {div: f.parentElement.id, w: f.getAttribute("width"), h: f.getAttribute("height"), sandbox: f.getAttribute("sandbox"),
		srcdoc: f.srcdoc, bid: f.parentElement.getAttribute("data-tsjs-bid") || ""};
})`

// creativeSandbox is tsjs's CREATIVE_SANDBOX_TOKENS (core/render.ts).
const creativeSandbox = "allow-forms allow-popups allow-popups-to-escape-sandbox allow-scripts allow-top-navigation-by-user-activation"
