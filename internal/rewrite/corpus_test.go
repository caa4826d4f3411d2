package rewrite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// On real pages, bytes no rule touches are copied exactly: with nothing to
// rewrite the output is the input, and a head injection is the only change.
func TestCorpusUnchangedBytesCopiedExactly(t *testing.T) {
	files := testutil.RequireCorpus(t)
	inject := []byte("<script>INJECTED</script>")
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := Rewrite(&out, &randomChunks{s: string(page), rng: newRand(int64(len(page)))}, &Options{OriginHost: "absent.invalid", RequestHost: "x.example", RequestScheme: "https"}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), page) {
			t.Errorf("%s: output differs from input with nothing to rewrite", filepath.Base(f))
		}
		out.Reset()
		st, err := Rewrite(&out, bytes.NewReader(page), &Options{HeadPrepend: inject})
		if err != nil {
			t.Fatal(err)
		}
		if !st.HeadFound {
			if !bytes.Equal(out.Bytes(), page) {
				t.Errorf("%s: no head, yet the output changed", filepath.Base(f))
			}
			continue
		}
		i := bytes.Index(out.Bytes(), inject)
		if i < 0 || !bytes.Equal(append(append([]byte{}, out.Bytes()[:i]...), out.Bytes()[i+len(inject):]...), page) {
			t.Errorf("%s: removing the injection does not give the input back", filepath.Base(f))
		}
	}
}
