package auction

import (
	"math/big"
	"regexp"
	"testing"
)

// FuzzBucket: prices come from bid endpoints. Any text ParsePrice accepts
// buckets to "N.NN", never above the granularity's cap, never above the
// price itself, and within one increment of it below the cap.
func FuzzBucket(f *testing.F) {
	for _, s := range []string{"0.29", "3", "3.049", "19.99", "20.01", "1e9", "2.9e-1", "1e-30", "0.0000001", "-1"} {
		f.Add(s)
	}
	shape := regexp.MustCompile(`^\d+\.\d\d$`)
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := ParsePrice(s)
		if !ok || p.Sign() <= 0 {
			return
		}
		for _, name := range GranularityNames() {
			g, _ := ParseGranularity(name)
			pb := g.Bucket(p)
			if !shape.MatchString(pb) {
				t.Fatalf("%s %s: %q", name, s, pb)
			}
			b, _ := new(big.Rat).SetString(pb)
			top := new(big.Rat).SetFrac64(g.buckets[len(g.buckets)-1].max, 100)
			if b.Cmp(p) > 0 || b.Cmp(top) > 0 {
				t.Fatalf("%s %s: bucket %s above the price or the cap", name, s, pb)
			}
			if p.Cmp(top) < 0 {
				// Below the cap the bucket is less than one increment (at most
				// 0.50) below the price.
				gap := new(big.Rat).Sub(p, b)
				if gap.Cmp(big.NewRat(1, 2)) >= 0 {
					t.Fatalf("%s %s: bucket %s is %s below the price", name, s, pb, gap.FloatString(4))
				}
			}
		}
	})
}
