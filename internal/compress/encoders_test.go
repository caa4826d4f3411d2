package compress

import (
	"bytes"
	"fmt"
	"testing"
)

// TestEncodersCheckSettingsWhenBuilt: a bad level is refused by
// NewEncoders, once, and an Encoders that was built starts a writer for
// every coding without an error to handle, which is what lets a response
// never fail for a setting.
func TestEncodersCheckSettingsWhenBuilt(t *testing.T) {
	for _, tt := range []struct {
		o     Options
		valid bool
	}{
		{Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22}, true},
		{Options{GzipLevel: -2, BrotliQuality: 0, BrotliWindow: 10}, true},
		{Options{GzipLevel: 10, BrotliQuality: 5, BrotliWindow: 22}, false},
		{Options{GzipLevel: 6, BrotliQuality: 12, BrotliWindow: 22}, false},
		{Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 0}, false},
	} {
		t.Run(fmt.Sprintf("%+v", tt.o), func(t *testing.T) {
			e, err := NewEncoders(tt.o)
			if (err == nil) != tt.valid {
				t.Fatalf("NewEncoders: err = %v, want valid=%v", err, tt.valid)
			}
			if !tt.valid {
				return
			}
			for _, c := range []Coding{Identity, Gzip, Deflate, Brotli} {
				var buf bytes.Buffer
				w := e.Writer(c, &buf)
				if _, err := w.Write([]byte("<p>hello</p>")); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if got, err := decodeAll(c, &buf, 1<<20); err != nil || string(got) != "<p>hello</p>" {
					t.Errorf("%s: decoded %q, %v", c, got, err)
				}
			}
		})
	}
}
