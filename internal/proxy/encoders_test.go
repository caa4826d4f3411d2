package proxy

import (
	"strings"
	"testing"
)

// TestNewRefusesBadCompressionSettings: compression settings are checked
// when the guest is built, once, not by each response's encoder, which
// answered every page with a 500 (the encoder_init reason) for a setting
// that had slipped past validation.
func TestNewRefusesBadCompressionSettings(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.Compression.BrotliWindow = 0 // past Validate, as a caller may set it
	g, err := New(cfg, Options{Bundle: []byte("bundle")})
	if err == nil {
		g.Close()
		t.Fatal("New accepted brotli window 0; a response would have failed for it")
	}
	if !strings.Contains(err.Error(), "window") {
		t.Errorf("err = %v, want it to name the window", err)
	}
}
