package measure

import (
	"testing"
)

func TestOverrideURL(t *testing.T) {
	tests := []struct {
		proxy, path, mode, want string
		wantErr                 bool
	}{
		{"http://127.0.0.1:8080", "/a/b.html", "identity", "http://127.0.0.1:8080/a/b.html?__ts_ssat_compression=identity", false},
		{"http://127.0.0.1:8080/", "a?x=1", "mirror", "http://127.0.0.1:8080/a?__ts_ssat_compression=mirror&x=1", false},
		{"http://h/base", "/p", "mirror", "http://h/base/p?__ts_ssat_compression=mirror", false},
		{"127.0.0.1:8080", "/", "mirror", "", true},
	}
	for _, tt := range tests {
		got, err := overrideURL(tt.proxy, tt.path, tt.mode)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("overrideURL(%q, %q, %q) = %q, %v; want %q (error %v)", tt.proxy, tt.path, tt.mode, got, err, tt.want, tt.wantErr)
		}
	}
}
