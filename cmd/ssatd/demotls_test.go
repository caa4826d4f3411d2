package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/demo"
)

// TestDemoTLSServesHTTP2 runs `ssatd demo -tls` in-process: both proxies
// answer a browser navigation over HTTPS with HTTP/2, with the ad stack,
// and the banner says which CA to trust.
func TestDemoTLSServesHTTP2(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	d, err := startDemo(ctx, demoOptions{addr: "127.0.0.1", shutdownTimeout: 2 * time.Second, tls: true, certDir: t.TempDir()}, zaptest.NewLogger(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := d.wait(); err != nil {
			t.Errorf("demo stopped with %v", err)
		}
	}()
	var banner bytes.Buffer
	d.printBanner(&banner)
	if !strings.Contains(banner.String(), "curl --cacert "+d.certs.CACert+" -sD-") || !strings.Contains(banner.String(), "created a local CA") {
		t.Errorf("banner:\n%s", banner.String())
	}
	caPEM, err := os.ReadFile(d.certs.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	for _, base := range []string{d.mirrorURL, d.offloadURL} {
		if !strings.HasPrefix(base, "https://") {
			t.Fatalf("proxy URL %s", base)
		}
		req, _ := http.NewRequest(http.MethodGet, base+demo.ArticlePaths()[0], nil)
		req.Header.Set("Sec-Fetch-Dest", "document")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("tsjs")) {
			t.Errorf("%s: %s %d, %d bytes, %v; want HTTP/2 200 with the bundle tag", base, resp.Proto, resp.StatusCode, len(body), err)
		}
	}
}
