package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
)

func writePages(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i := range 3 {
		page := fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>p%d</title></head>`+
			`<body><div id="top"></div><p>%s</p></body></html>`, i, strings.Repeat("lorem ipsum dolor sit amet ", 200*(i+1)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.html", i)), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunShort(t *testing.T) {
	dir := writePages(t)
	var out bytes.Buffer
	rep, err := run(context.Background(), options{Corpus: dir, Concurrency: 4, Duration: 2 * time.Second, Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := printReport(&out, rep, true); err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 {
		t.Errorf("errors = %d: %v", rep.Errors, rep.ErrorSamples)
	}
	if rep.Requests == 0 {
		t.Error("no requests were measured")
	}
	for _, k := range kindNames {
		if rep.ByKind[k] == 0 {
			t.Errorf("no %s requests in the mix: %v", k, rep.ByKind)
		}
	}
	if rep.GoroutinesAfter > rep.GoroutinesBefore+5 {
		t.Errorf("goroutines: %d before, %d after\n%s", rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutineStacks)
	}
	if !rep.Pass {
		t.Errorf("not a pass: %v", rep.Failures)
	}
	// The proxies' histograms count exactly the requests the clients made.
	if sent := rep.Requests + rep.WarmupRequests; rep.RequestsSent != sent ||
		rep.Recorded != (recordedCounts{Requests: sent, DurationCount: sent, TTFBCount: sent}) {
		t.Errorf("%d requests made (%d sent), metrics recorded %+v", sent, rep.RequestsSent, rep.Recorded)
	}
	var back report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("-json output: %v\n%s", err, out.String())
	}
	if back.Requests != rep.Requests || back.ErrorsByKind == nil {
		t.Errorf("-json output does not match the report: %+v", back)
	}
}

// The checks must be able to fail: a wrong expectation is a mismatch, a
// longer one a truncation, an unexpected coding a coding error.
func TestChecksDetectProblems(t *testing.T) {
	res, err := loadResources(writePages(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := startStack(res, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if err := st.expectations(res); err != nil {
		t.Fatal(err)
	}
	tr := st.clientTransport(1)
	defer tr.CloseIdleConnections()
	l := &loader{stack: st, client: &http.Client{Transport: tr}}
	for _, ae := range clientEncodings {
		l.accepts = append(l.accepts, compress.ParseAcceptEncoding([]string{ae}))
	}
	w := &clientWork{buf: make([]byte, 32<<10)}
	page := res[0]
	ctx := context.Background()
	for px := range numProxies {
		for aei := range clientEncodings {
			if out := l.one(ctx, w, px, page, kindEligible, aei); out.errKind >= 0 {
				t.Fatalf("%s %q: %s: %s", proxyNames[px], clientEncodings[aei], errKindNames[out.errKind], out.detail)
			}
		}
	}
	good := page.want[kindEligible]
	page.want[kindEligible].sum[0] ^= 1
	if out := l.one(ctx, w, proxyOffload, page, kindEligible, 0); out.errKind != errMismatch {
		t.Errorf("altered expectation: got %d (%s), want body_mismatch", out.errKind, out.detail)
	}
	page.want[kindEligible].n += 10
	if out := l.one(ctx, w, proxyMirror, page, kindEligible, 1); out.errKind != errTruncated {
		t.Errorf("longer expectation: got %d (%s), want truncated", out.errKind, out.detail)
	}
	page.want[kindEligible] = good
	l.accepts[0] = compress.ParseAcceptEncoding([]string{"identity"}) // the client "sent" br, gzip
	if out := l.one(ctx, w, proxyMirror, page, kindEligible, 0); out.errKind != errCoding {
		t.Errorf("coding the client did not accept: got %d (%s), want coding", out.errKind, out.detail)
	}
	missing := *page
	missing.path = "/nope.html"
	if out := l.one(ctx, w, proxyMirror, &missing, kindEligible, 2); out.errKind != errStatus {
		t.Errorf("404: got %d (%s), want status", out.errKind, out.detail)
	}
}

func TestCheckerMarkerAcrossWrites(t *testing.T) {
	doc := []byte(`<html><head><script src="/x" id="trustedserver-js"></script>` +
		`<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[]");</script></head></html>`)
	for split := 1; split < len(doc); split++ {
		var c checker
		c.reset(true)
		for _, part := range [][]byte{doc[:split/2], doc[split/2 : split], doc[split:]} {
			c.Write(part)
		}
		if !c.found[0] || !c.found[1] || c.n != int64(len(doc)) {
			t.Fatalf("split at %d: found %v, n %d", split, c.found, c.n)
		}
	}
}

func TestCLIUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := cli(context.Background(), []string{"-c", "0"}, &out, &errb); code != 2 {
		t.Errorf("-c 0 without -corpus: exit %d, want 2 (%s)", code, errb.String())
	}
	if code := cli(context.Background(), []string{"-corpus", t.TempDir(), "-d", "1s"}, &out, &errb); code != 1 {
		t.Errorf("empty corpus: exit %d, want 1 (%s)", code, errb.String())
	}
}

// TestOverloadedPageIsNotAnError: a page refused with 503 and Retry-After,
// or any request refused with 429 and Retry-After (one client's share of
// the places, which every load client shares: they come from one
// address), is counted apart; any other 503 or 429, or a 503 for a
// non-HTML response (which the guest never refuses), is a status error.
func TestOverloadedPageIsNotAnError(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		html       bool
		retryAfter string
		overloaded bool
		errKind    int
	}{
		{"page with Retry-After", 503, true, "1", true, -1},
		{"page without Retry-After", 503, true, "", false, errStatus},
		{"asset with Retry-After", 503, false, "1", false, errStatus},
		{"page past its client's share", 429, true, "1", true, -1},
		{"asset past its client's share", 429, false, "1", true, -1},
		{"429 without Retry-After", 429, true, "", false, errStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status),
				Header: http.Header{}, Body: io.NopCloser(strings.NewReader("busy\n"))}
			if tc.retryAfter != "" {
				resp.Header.Set("Retry-After", tc.retryAfter)
			}
			out := outcome{errKind: -1}
			l := &loader{}
			l.check(&out, &clientWork{buf: make([]byte, 1024)}, resp, &resource{html: tc.html}, kindEligible, 0)
			if out.overloaded != tc.overloaded || out.errKind != tc.errKind {
				t.Errorf("overloaded %v, error kind %d; want %v, %d", out.overloaded, out.errKind, tc.overloaded, tc.errKind)
			}
		})
	}
}
