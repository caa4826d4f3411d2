package tcf

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// bitWriter assembles a string field by field, so each test states the
// values it encodes.
type bitWriter struct {
	bits []byte // one 0/1 per bit
}

func (w *bitWriter) put(v, n int) *bitWriter {
	for i := n - 1; i >= 0; i-- {
		w.bits = append(w.bits, byte(v>>i&1))
	}
	return w
}

func (w *bitWriter) flags(set map[int]bool, n int) *bitWriter {
	for i := 1; i <= n; i++ {
		b := 0
		if set[i] {
			b = 1
		}
		w.put(b, 1)
	}
	return w
}

func (w *bitWriter) letters(s string) *bitWriter {
	return w.put(int(s[0]-'A'), 6).put(int(s[1]-'A'), 6)
}

func (w *bitWriter) String() string {
	out := make([]byte, (len(w.bits)+7)/8)
	for i, b := range w.bits {
		out[i/8] |= b << (7 - i%8)
	}
	return base64.RawURLEncoding.EncodeToString(out)
}

// fields is what a test string says.
type fields struct {
	version     int
	created     int // deciseconds since the epoch
	cmpID       int
	cmpVersion  int
	screen      int
	lang        string
	vlv         int
	policy      int
	purposes    map[int]bool
	li          map[int]bool
	special     map[int]bool
	publisherCC string
}

// core writes the fixed fields, then vendorSections.
func core(f fields) *bitWriter {
	w := &bitWriter{}
	w.put(f.version, 6).put(f.created, 36).put(f.created, 36).put(f.cmpID, 12).put(f.cmpVersion, 12).
		put(f.screen, 6).letters(f.lang).put(f.vlv, 12).put(f.policy, 6).put(0, 1).put(0, 1).
		flags(f.special, 12).flags(f.purposes, 24).flags(f.li, 24).put(0, 1).letters(f.publisherCC)
	return w
}

var base = fields{version: 2, created: 16_000_000_000, cmpID: 7, cmpVersion: 3, screen: 1, lang: "EN", vlv: 150, policy: 4,
	purposes: map[int]bool{1: true, 3: true, 24: true}, li: map[int]bool{2: true}, special: map[int]bool{1: true}, publisherCC: "DE"}

func TestDecodeStatedFields(t *testing.T) {
	// Vendor consents as a bit field: max id 5, vendors 2 and 5.
	// Legitimate interest as ranges: max id 100, entries 10 and 20-30.
	w := core(base)
	w.put(5, 16).put(0, 1).flags(map[int]bool{2: true, 5: true}, 5)
	w.put(100, 16).put(1, 1).put(2, 12).put(0, 1).put(10, 16).put(1, 1).put(20, 16).put(30, 16)
	w.put(0, 12) // no publisher restrictions
	s := w.String()
	c, err := Decode(s + ".YAAAAAAAAAAA") // a second segment is ignored
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 2 || c.CmpID != 7 || c.CmpVersion != 3 || c.ConsentScreen != 1 || c.ConsentLanguage != "EN" ||
		c.VendorListVersion != 150 || c.PolicyVersion != 4 || c.PublisherCC != "DE" {
		t.Errorf("fixed fields: %+v", c)
	}
	if want := time.Date(2020, 9, 13, 12, 26, 40, 0, time.UTC); !c.Created.Equal(want) || !c.LastUpdated.Equal(want) {
		t.Errorf("created %v, last updated %v, want %v", c.Created, c.LastUpdated, want)
	}
	for n := 1; n <= 24; n++ {
		if c.Purpose(n) != base.purposes[n] {
			t.Errorf("purpose %d consent = %v", n, c.Purpose(n))
		}
		if c.PurposesLI[n-1] != base.li[n] {
			t.Errorf("purpose %d LI = %v", n, c.PurposesLI[n-1])
		}
	}
	if !c.SpecialFeatureOptIns[0] || c.SpecialFeatureOptIns[1] {
		t.Errorf("special features %v", c.SpecialFeatureOptIns)
	}
}

// TestDecodeIgnoresVendorSections: the vendor sections and publisher
// restrictions are not read. A string whose vendor section ends early or
// names a range past its MaxVendorId still decodes, as Trusted Server's
// decoder accepts it (consent/tcf.rs); a string that ends before the
// vendor consent header (230 bits) does not.
func TestDecodeIgnoresVendorSections(t *testing.T) {
	for name, s := range map[string]string{
		"vendor bit field ends early":     core(base).put(40, 16).put(0, 1).flags(nil, 8).String(),
		"range beyond max vendor id":      core(base).put(5, 16).put(1, 1).put(1, 12).put(0, 1).put(6, 16).put(0, 16).put(0, 1).put(0, 12).String(),
		"nothing after the vendor header": core(base).put(5, 16).put(1, 1).String(),
	} {
		c, err := Decode(s)
		if err != nil || !c.Purpose(1) || c.Purpose(2) || !c.Purpose(3) || c.PublisherCC != "DE" {
			t.Errorf("%s: %+v, %v; want purposes 1 and 3, publisher DE", name, c, err)
		}
	}
	header := core(base).put(5, 16).put(1, 1).String()
	if c, err := Decode(header[:len(header)-1]); !errors.Is(err, ErrInvalid) {
		t.Errorf("cut inside the vendor consent header: %+v, %v; want ErrInvalid", c, err)
	}
}

// A literal string, pinned: version 2, created and last updated
// 2020-09-13T12:26:40Z, CMP 7 version 3, screen 1, language EN, vendor
// list 150, policy 4, special feature 1, purposes 1, 3 and 24 with consent,
// purpose 2 by legitimate interest, publisher country DE, no vendors.
const pinned = "CO5rKAAO5rKAAAHADBENCWEIAKAAAUAAAAYgAAAAAAAA"

func TestDecodePinned(t *testing.T) {
	w := core(base).put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12)
	if got := w.String(); got != pinned {
		t.Fatalf("the test encoder changed: %q, pinned %q", got, pinned)
	}
	c, err := Decode(pinned)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Purpose(1) || c.Purpose(2) || !c.Purpose(3) || !c.Purpose(24) || c.CmpID != 7 || c.PublisherCC != "DE" {
		t.Errorf("decoded %+v", c)
	}
}

func TestDecodeRejects(t *testing.T) {
	noP1 := base
	noP1.purposes = map[int]bool{2: true}
	v1 := base
	v1.version = 1
	badLang := base
	badLang.lang = "E[" // '[' is letter code 26
	full := core(base).put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12).String()
	tests := []struct {
		name, s string
	}{
		{"empty", ""},
		{"not base64url", "CO5j+B4A/O5jB4"},
		{"version 1", core(v1).put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12).String()},
		{"truncated in the fixed fields", full[:10]},
		{"ends before the vendor consent header", core(base).String()},
		{"all ones: version 63", strings.Repeat("_", 40)},
		{"letter out of range", core(badLang).put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12).String()},
		{"too long", strings.Repeat("A", maxLen+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := Decode(tt.s); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode = %+v, %v; want ErrInvalid", c, err)
			}
		})
	}
	// Decodes, but does not grant purpose 1.
	c, err := Decode(core(noP1).put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12).String())
	if err != nil || c.Purpose(1) || !c.Purpose(2) {
		t.Fatalf("%+v, %v", c, err)
	}
}
