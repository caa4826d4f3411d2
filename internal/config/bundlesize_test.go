package config

import "testing"

// CheckBundleSize is the one size rule of bundle.file, for Validate and
// for the guest's read at start-up alike.
func TestCheckBundleSize(t *testing.T) {
	for _, tt := range []struct {
		n  int64
		ok bool
	}{{0, false}, {1, true}, {MaxBundleBytes, true}, {MaxBundleBytes + 1, false}} {
		if err := CheckBundleSize(tt.n); (err == nil) != tt.ok {
			t.Errorf("CheckBundleSize(%d) = %v, want ok %v", tt.n, err, tt.ok)
		}
	}
}
