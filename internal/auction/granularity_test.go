package auction

import "testing"

func TestGranularityEdges(t *testing.T) {
	verifyNoLeaks(t)
	tests := []struct {
		gran  string
		price string
		want  string
	}{
		// Floors to the cent exactly: no binary floating point.
		{"dense", "0.29", "0.29"},
		{"dense", "0.57", "0.57"},
		{"dense", "1.005", "1.00"},
		{"dense", "2.9e-1", "0.29"},
		{"dense", "0.009", "0.00"},
		{"dense", "0.01", "0.01"},
		{"dense", "2.999", "2.99"},
		{"dense", "3", "3.00"},
		{"dense", "3.0001", "3.00"},
		{"dense", "3.049", "3.00"},
		{"dense", "3.05", "3.05"},
		{"dense", "7.99", "7.95"},
		{"dense", "8.00", "8.00"},
		{"dense", "8.49", "8.00"},
		{"dense", "8.50", "8.50"},
		{"dense", "19.99", "19.50"},
		{"dense", "20", "20.00"},
		{"dense", "20.01", "20.00"},
		{"dense", "1e9", "20.00"},

		{"low", "0.49", "0.00"},
		{"low", "0.50", "0.50"},
		{"low", "4.99", "4.50"},
		{"low", "5.00", "5.00"},
		{"low", "5.01", "5.00"},

		{"medium", "0.09", "0.00"},
		{"medium", "0.10", "0.10"},
		{"medium", "0.29", "0.20"},
		{"medium", "19.99", "19.90"},
		{"medium", "20.00", "20.00"},
		{"medium", "25", "20.00"},

		{"high", "0.01", "0.01"},
		{"high", "0.29", "0.29"},
		{"high", "19.999", "19.99"},
		{"high", "20.00", "20.00"},
		{"high", "20.5", "20.00"},

		{"auto", "0.04", "0.00"},
		{"auto", "0.29", "0.25"},
		{"auto", "4.99", "4.95"},
		{"auto", "5.00", "5.00"},
		{"auto", "5.01", "5.00"},
		{"auto", "5.19", "5.10"},
		{"auto", "9.99", "9.90"},
		{"auto", "10.00", "10.00"},
		{"auto", "10.49", "10.00"},
		{"auto", "10.50", "10.50"},
		{"auto", "19.99", "19.50"},
		{"auto", "20", "20.00"},
		{"auto", "21", "20.00"},
	}
	for _, tt := range tests {
		g, err := ParseGranularity(tt.gran)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := ParsePrice(tt.price)
		if !ok {
			t.Fatalf("ParsePrice(%q) failed", tt.price)
		}
		if got := g.Bucket(p); got != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.gran, tt.price, got, tt.want)
		}
	}
}

func TestParsePriceRejects(t *testing.T) {
	verifyNoLeaks(t)
	for _, s := range []string{"", "abc", "1/3", "1e999999999", "1e-31", "0x10", "1.2.3"} {
		if _, ok := ParsePrice(s); ok {
			t.Errorf("ParsePrice(%q) accepted", s)
		}
	}
	if _, err := ParseGranularity("fine"); err == nil {
		t.Error("unknown granularity accepted")
	}
}
