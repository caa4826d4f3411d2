package config

import (
	"testing"
	"time"
)

func TestSlotMatches(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{"/"}, "/", true},
		{[]string{"/"}, "/news", false},
		{[]string{"/", "/news/**"}, "/news/2024/story", true},
		{[]string{"/", "/news/**"}, "/sport/x", false},
		{[]string{"/**/*.html"}, "/a/b.html", true},
		{[]string{"/**/*.html"}, "/a/b.htm", false},
		{nil, "/", false},
	}
	for _, tt := range tests {
		c := valid()
		c.CreativeOpportunities.Slots = []Slot{{ID: "s", PagePatterns: tt.patterns}}
		// Validate reports the nil-patterns case; Matches must still just
		// say no rather than panic.
		_ = c.Validate()
		s := &c.CreativeOpportunities.Slots[0]
		if got := s.Matches(tt.path); got != tt.want {
			t.Errorf("patterns %q: Matches(%q) = %v, want %v", tt.patterns, tt.path, got, tt.want)
		}
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"15s", 15 * time.Second, false},
		{"1h2m", time.Hour + 2*time.Minute, false},
		{"0", 0, false},
		{"15", 0, true},
		{"", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		var d Duration
		err := d.UnmarshalText([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("UnmarshalText(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if d.Duration != tt.want {
			t.Errorf("UnmarshalText(%q) = %v, want %v", tt.in, d.Duration, tt.want)
		}
		text, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Errorf("MarshalText(%v) = %q does not round-trip: %v %v", d, text, back, err)
		}
	}
}
