package rewrite

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// FuzzFlightHostile: arbitrary push strings and payloads do not
// panic or hang, and their output does not depend on reads.
func FuzzFlightHostile(f *testing.F) {
	for _, s := range []string{`1:T1b,https://origin.pub.example/`, `0:\"https://origin.pub.exam`, `1:T\u0032,ab`,
		`2:\ud83d\ude00T5,`, `3:A0,4:T0,`, `\u0031:T1,\u00e9`, `1:C\n`, "a:T3,\\\\\\"} {
		f.Add(s, "mple/x\\n", int64(1), uint8(0))
	}
	f.Fuzz(func(t *testing.T, a, b string, seed int64, mt uint8) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("slow input %q %q %d %d", a, b, seed, mt))
			}
		}()
		page := "<html><head><meta charset=utf-8></head><body>" + push(a) + "<p>x</p>" + push(b) + "</body></html>"
		o := flightTestOpts()
		if mt > 0 {
			o.MaxTokenBytes = 40 + int(mt)
		}
		whole := rewriteFlightVariant(t, page, o, -1)
		split := rewriteFlightVariant(t, page, o, seed)
		if whole != split {
			t.Fatalf("reads:\npage  %q\nwhole %q\nsplit %q", page, whole, split)
		}
		payload := strings.ReplaceAll(a+b, `\n`, "\n")
		var o1, o2 bytes.Buffer
		to := &TextOptions{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https"}
		RewriteFlight(&o1, strings.NewReader(payload), to)
		RewriteFlight(&o2, &splitReader{s: payload, rng: rand.New(rand.NewSource(seed))}, to)
		if o1.String() != o2.String() {
			t.Fatalf("payload reads: %q %q", o1.String(), o2.String())
		}
	})
}
