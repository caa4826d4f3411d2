package tcf

import (
	"errors"
	"testing"
)

// FuzzDecode: the cookie comes from the client. Decode must never panic,
// and must either fail with ErrInvalid or return a version 2 string whose
// letters are A-Z.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{pinned, "", "C", "CO5rKAAO5rKAAAHADBENCWEIAKAAAUAAAAYgAAAAAAAA.YAAAAAAAAAAA", "____", "COw4XqLOw4XqLAAAAAENAXCAAAAAAAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Decode(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if c.Version != 2 {
			t.Fatalf("accepted version %d", c.Version)
		}
		for _, l := range c.ConsentLanguage + c.PublisherCC {
			if l < 'A' || l > 'Z' {
				t.Fatalf("letters %q %q", c.ConsentLanguage, c.PublisherCC)
			}
		}
	})
}
