package compress

import (
	"net/http"
	"testing"
)

func TestAddVary(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, []string{"Accept-Encoding"}},
		{"other", []string{"Cookie"}, []string{"Cookie", "Accept-Encoding"}},
		{"listed in a list", []string{"Cookie, accept-encoding"}, []string{"Cookie, accept-encoding"}},
		{"star", []string{"*"}, []string{"*"}},
		{"star in a list", []string{"Cookie, *"}, []string{"Cookie, *"}},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.in {
			h.Add("Vary", v)
		}
		AddVary(h, "Accept-Encoding")
		got := h.Values("Vary")
		if len(got) != len(tt.want) {
			t.Fatalf("%s: Vary %q, want %q", tt.name, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("%s: Vary %q, want %q", tt.name, got, tt.want)
			}
		}
		if VaryCount(h, "accept-encoding") > 1 {
			t.Fatalf("%s: listed twice", tt.name)
		}
	}
	h := http.Header{"Vary": {"Accept-Encoding", "Cookie, Accept-Encoding"}}
	if n := VaryCount(h, "Accept-Encoding"); n != 2 {
		t.Fatalf("VaryCount = %d, want 2", n)
	}
}
