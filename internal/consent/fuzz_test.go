package consent

import (
	"testing"
)

// FuzzGPP: any cookie value decodes or fails with ErrInvalidGPP, never
// panics, and a decoded header lists distinct ids, one per section.
func FuzzGPP(f *testing.F) {
	for _, s := range []string{"DBABTA~1YNN", "DBACNY~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN", "DBABLA~BVQqAAAAAgA.QA",
		header(7, 9) + "~BVQqAAAAAgA.QA~BVVVVVVVVWA.AA", "", "~", "D", "DBA_____~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := DecodeGPP(s)
		if err != nil {
			return
		}
		if len(g.SectionIDs) != len(g.Sections) {
			t.Fatalf("%q: ids %v, sections %d", s, g.SectionIDs, len(g.Sections))
		}
		for _, id := range g.SectionIDs {
			if id < 1 || id > maxSectionID {
				t.Fatalf("%q: section id %d", s, id)
			}
		}
	})
}
