package compress

import (
	"testing"
)

func TestParseContentEncoding(t *testing.T) {
	tests := []struct {
		in   string
		want Coding
		ok   bool
	}{
		{"", Identity, true},
		{"identity", Identity, true},
		{" IDENTITY ", Identity, true},
		{"gzip", Gzip, true},
		{"GZip", Gzip, true},
		{"  gzip\t", Gzip, true},
		{"deflate", Deflate, true},
		{"br", Brotli, true},
		{"BR", Brotli, true},
		{"x-gzip", "", false},
		{"gzip, br", "", false},
		{"gzip,gzip", "", false},
		{"zstd", "", false},
		{"compress", "", false},
		{"gzip;q=1", "", false},
		{"g zip", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseContentEncoding(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseContentEncoding(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMirrorOriginAcceptEncoding(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   string
	}{
		{"modern browser", []string{"gzip, deflate, br, zstd"}, "gzip, deflate, br"},
		{"gzip refused", []string{"br, gzip;q=0, zstd"}, "br"},
		{"only unsupported", []string{"zstd"}, "identity"},
		{"identity refused", []string{"gzip, br, identity;q=0"}, "gzip, br"},
		{"no header", nil, "identity"},
		{"star", []string{"*"}, "gzip, deflate, br"},
		{"star refused", []string{"*;q=0"}, "identity"},
		{"star minus gzip", []string{"*, gzip;q=0"}, "deflate, br"},
		{"upper case", []string{"GZIP"}, "gzip"},
		{"q zero with decimals", []string{"gzip;q=0.000"}, "identity"},
		{"q above one", []string{"gzip;q=1.5"}, "identity"},
		{"q not a number", []string{"gzip;q=abc"}, "identity"},
		{"junk separators", []string{",,,gzip , ; ;"}, "gzip"},
		{"empty value", []string{""}, "identity"},
		{"order is fixed", []string{"br;q=1, deflate;q=0.5, gzip;q=0.1"}, "gzip, deflate, br"},
		{"several lines", []string{"br", "gzip;q=0.8"}, "gzip, br"},
		{"smallest q", []string{"gzip;q=0.001"}, "gzip"},
		{"q one with zeros", []string{"br;q=1.000"}, "br"},
		{"q one with nonzero decimal", []string{"br;q=1.001"}, "identity"},
		{"q too precise", []string{"br;q=0.0001"}, "identity"},
		{"q upper case name", []string{"br;Q=0.5"}, "br"},
		{"q space before value", []string{"br; q=0.5"}, "br"},
		{"q empty", []string{"br;q="}, "identity"},
		{"q without equals", []string{"br;q"}, "identity"},
		{"q negative", []string{"br;q=-0.5"}, "identity"},
		{"q one trailing dot", []string{"br;q=1."}, "br"},
		{"q zero trailing dot alone", []string{"br;q=0."}, "identity"},
		{"q zero trailing dot", []string{"br;q=0.,gzip"}, "gzip"},
		{"unknown parameter kept", []string{"gzip;level=1"}, "gzip"},
		{"invalid token", []string{"gz/ip, br"}, "br"},
		{"duplicate lowest wins", []string{"gzip, gzip;q=0"}, "identity"},
		{"duplicate across lines", []string{"gzip;q=0", "gzip"}, "identity"},
		{"x-gzip not an alias", []string{"x-gzip"}, "identity"},
		{"star with explicit", []string{"*;q=0, br"}, "br"},
		{"identity only", []string{"identity"}, "identity"},
		{"whitespace only", []string{"   "}, "identity"},
		{"star q half", []string{"*;q=0.5"}, "gzip, deflate, br"},
		{"non ascii junk", []string{"gzïp, \xff, br"}, "br"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MirrorOriginAcceptEncoding(ParseAcceptEncoding(tt.values)); got != tt.want {
				t.Errorf("MirrorOriginAcceptEncoding(%q) = %q, want %q", tt.values, got, tt.want)
			}
		})
	}
}

func TestAcceptEncodingQ(t *testing.T) {
	tests := []struct {
		values  []string
		coding  string
		q       float64
		accepts bool
	}{
		{[]string{"gzip;q=0.5"}, "gzip", 0.5, true},
		{[]string{"gzip;q=0.5"}, "GZIP", 0.5, true},
		{[]string{"gzip;q=0.123"}, "gzip", 0.123, true},
		{[]string{"gzip;q=0.5"}, "br", 0, false},
		{[]string{"gzip;q=0"}, "gzip", 0, false},
		{[]string{"*;q=0.3"}, "br", 0.3, true},
		{[]string{"*;q=0.3, br;q=0"}, "br", 0, false},
		{[]string{"*;q=0, br;q=0.2"}, "br", 0.2, true},
		// identity: acceptable by default, even when not listed.
		{nil, "identity", 1, true},
		{[]string{""}, "identity", 1, true},
		{[]string{"gzip"}, "identity", 1, true},
		{[]string{"identity;q=0"}, "identity", 0, false},
		{[]string{"*;q=0"}, "identity", 0, false},
		{[]string{"*;q=0, identity"}, "identity", 1, true},
		{[]string{"*;q=0, identity;q=0.5"}, "identity", 0.5, true},
		{[]string{"*;q=0.4"}, "identity", 0.4, true},
		{[]string{"IDENTITY;Q=0"}, "identity", 0, false},
		// No header: only identity, by policy.
		{nil, "gzip", 0, false},
	}
	for _, tt := range tests {
		a := ParseAcceptEncoding(tt.values)
		if got := a.Q(tt.coding); got != tt.q {
			t.Errorf("%q: Q(%q) = %v, want %v", tt.values, tt.coding, got, tt.q)
		}
		if got := a.Accepts(tt.coding); got != tt.accepts {
			t.Errorf("%q: Accepts(%q) = %v, want %v", tt.values, tt.coding, got, tt.accepts)
		}
	}
}

func TestAcceptEncodingPresent(t *testing.T) {
	tests := []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{}, false},
		{[]string{""}, true},
		{[]string{"junk;;;"}, true},
		{[]string{"gzip"}, true},
	}
	for _, tt := range tests {
		if got := ParseAcceptEncoding(tt.values).Present(); got != tt.want {
			t.Errorf("Present(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

func FuzzParseAcceptEncoding(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br", "*;q=0", ",,,gzip , ; ;", "br;q=1.000;q=0", "\x00;q=0.", "a;q=1.;q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a := ParseAcceptEncoding([]string{v})
		got := MirrorOriginAcceptEncoding(a)
		if got == "" {
			t.Fatalf("%q: empty mirror value", v)
		}
		for _, c := range []string{"gzip", "deflate", "br", "identity", "zstd"} {
			if q := a.Q(c); q < 0 || q > 1 || (q > 0) != a.Accepts(c) {
				t.Fatalf("%q: Q(%s) = %v inconsistent with Accepts %v", v, c, q, a.Accepts(c))
			}
		}
	})
}

func TestChoose(t *testing.T) {
	all := []Coding{Brotli, Gzip, Deflate}
	tests := []struct {
		name    string
		values  []string
		offered []Coding
		want    Coding
	}{
		{"no header", nil, all, Identity},
		{"empty header", []string{""}, all, Identity},
		{"ties go to the first offer", []string{"gzip, deflate, br"}, all, Brotli},
		{"server order breaks ties", []string{"br, gzip"}, []Coding{Gzip, Brotli}, Gzip},
		{"higher weight wins over order", []string{"br;q=0.5, gzip"}, all, Gzip},
		{"refused coding is skipped", []string{"br;q=0, gzip"}, all, Gzip},
		{"x-gzip is gzip", []string{"x-gzip"}, all, Gzip},
		{"star", []string{"*"}, all, Brotli},
		{"star minus one", []string{"*, br;q=0"}, all, Gzip},
		{"nothing acceptable: identity", []string{"zstd"}, all, Identity},
		{"identity refused, nothing else: identity anyway", []string{"identity;q=0"}, all, Identity},
		{"named identity beats a lower weight", []string{"gzip;q=0.5, identity"}, append(all, Identity), Identity},
		{"unnamed identity ranks last", []string{"br;q=0.1"}, append([]Coding{Identity}, all...), Brotli},
		{"star names identity", []string{"*;q=0.5, br;q=0.1"}, append([]Coding{Identity}, all...), Identity},
		{"nothing offered", []string{"gzip"}, nil, Identity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseAcceptEncoding(tt.values).Choose(tt.offered...); got != tt.want {
				t.Errorf("Choose(%q) among %q = %q, want %q", tt.values, tt.offered, got, tt.want)
			}
		})
	}
}
