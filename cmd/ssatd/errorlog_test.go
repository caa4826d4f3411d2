package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/devcert"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// TestALPNNamesDoNotFillTheHandshakeErrorLine: a ClientHello offering
// only protocols ssatd does not speak fails the handshake, and
// crypto/tls's error quotes every protocol name offered, so 250 names of
// 200 bytes put a line of 52 KB into the log for each connection. The
// client listener's error log (where net/http and crypto/tls write)
// bounds each line by telemetry.Text; the line still says what failed.
func TestALPNNamesDoNotFillTheHandshakeErrorLine(t *testing.T) {
	o := newTestOrigin(t)
	pair, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
tls_cert_file = %q
tls_key_file = %q
[publisher]
domain = "127.0.0.1"
origin_url = %q
`, pair.Cert, pair.Key, o.srv.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.DebugLevel)).WithOptions(zap.Hooks(func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "TLS handshake error") {
			lines <- e.Message
		}
		return nil
	}))
	d, err := newDaemon(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	var ls listeners
	for _, l := range []*net.Listener{&ls.client, &ls.admin} {
		if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx, &ls) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	var protos []string
	for i := range 250 {
		protos = append(protos, fmt.Sprintf("%s%d", strings.Repeat("z", 200), i))
	}
	c, err := tls.Dial("tcp", ls.client.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: protos})
	if err == nil {
		c.Close()
		t.Fatal("the handshake succeeded with no protocol in common")
	}
	select {
	case line := <-lines:
		if len(line) > telemetry.MaxTextBytes+len("…") || !strings.Contains(line, "unsupported application protocols") {
			t.Errorf("handshake error line of %d bytes (at most %d): %.160q", len(line), telemetry.MaxTextBytes, line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no handshake error logged")
	}
}
