package rewrite

import (
	"bytes"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func rewriteFlightString(t *testing.T, in string, seed int64) string {
	t.Helper()
	var out bytes.Buffer
	var src interface{ Read([]byte) (int, error) } = strings.NewReader(in)
	if seed >= 0 {
		src = &splitReader{s: in, rng: rand.New(rand.NewSource(seed))}
	}
	o := &TextOptions{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https"}
	if _, err := RewriteFlight(&out, src, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestFlightPayload: a text/x-component payload gets the text rules of a
// text response row by row, and a text row its new length (trusted-server
// rsc_flight.rs); what cannot be read as rows is copied as it is.
func TestFlightPayload(t *testing.T) {
	const o, w = "https://origin.pub.example", "https://www.pub.example"
	long := strings.Repeat("x", DefaultMaxTokenBytes)
	cases := []struct{ name, in, want string }{
		{"rows", `0:{"u":"` + o + `/a","h":"origin.pub.example"}` + "\n1:T1b," + o + "/2:I[\"" + o + "\"]\n",
			`0:{"u":"` + w + `/a","h":"www.pub.example"}` + "\n1:T18," + w + "/2:I[\"" + w + "\"]\n"},
		{"empty rows", "0:\n1:T0,2:\"" + o + "\"\n", "0:\n1:T0,2:\"" + w + "\"\n"},
		{"binary row left", "3:A1b," + o + "/4:\"" + o + "\"\n", "3:A1b," + o + "/4:\"" + w + "\"\n"},
		{"not rows", "a{b:url(" + o + "/i.png)}\n", "a{b:url(" + o + "/i.png)}\n"},
		{"text row longer than the limit", "5:T" + strconv.FormatInt(int64(len(long)+27), 16) + "," + o + "/" + long + "6:\"" + o + "\"\n",
			"5:T" + strconv.FormatInt(int64(len(long)+27), 16) + "," + o + "/" + long + "6:\"" + w + "\"\n"},
		{"newline row longer than the limit", "7:\"" + o + "/" + long + "\"\n8:\"" + o + "\"\n", "7:\"" + o + "/" + long + "\"\n8:\"" + w + "\"\n"},
		{"a payload that ends inside a row", "9:T40," + o, "9:T40," + o},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(-1); seed < 8; seed++ {
				if got := rewriteFlightString(t, c.in, seed); got != c.want {
					t.Fatalf("reads %d:\n got %.200q\nwant %.200q", seed, got, c.want)
				}
			}
		})
	}
}

// genFlightPayload is a payload of rows made of genAtoms, and its rows.
func genFlightPayload(rng *rand.Rand) (string, []genRow) {
	var b strings.Builder
	var rows []genRow
	for id := range 1 + rng.Intn(10) {
		b.WriteString(strconv.FormatInt(int64(id), 16) + ":")
		switch rng.Intn(3) {
		case 0:
			r := genRow{content: jsonRowText(strings.Join(genContent(rng, false), ""))}
			b.WriteString(r.content + "\n")
			rows = append(rows, r)
		case 1:
			r := genRow{tag: 'T', content: strings.Join(genContent(rng, true), "")}
			b.WriteString("T" + strconv.FormatInt(int64(len(r.content)), 16) + "," + r.content)
			rows = append(rows, r)
		default:
			raw := string([]byte{0, '\n', 0xff}) + " https://origin.pub.example/"
			b.WriteString("A" + strconv.FormatInt(int64(len(raw)), 16) + "," + raw)
			rows = append(rows, genRow{tag: 'A', content: raw, keep: true})
		}
	}
	return b.String(), rows
}

// TestFlightPayloadDifferential reads the rewritten payload back with
// refRows and compares each row with refText (text_test.go) on the
// generated one.
func TestFlightPayloadDifferential(t *testing.T) {
	for seed := range int64(400) {
		in, rows := genFlightPayload(rand.New(rand.NewSource(seed)))
		got := refRows(t, []byte(rewriteFlightString(t, in, seed%5-1)))
		if len(got) != len(rows) {
			t.Fatalf("seed %d: %d rows, want %d", seed, len(got), len(rows))
		}
		for i, r := range rows {
			want := r.content
			if !r.keep {
				want = refText(r.content, "origin.pub.example", "www.pub.example", "https", bareAtBoundary)
			}
			if got[i].tag != r.tag || got[i].content != want {
				t.Fatalf("seed %d row %d: got %c %q\nwant %c %q\nin %q", seed, i, got[i].tag, got[i].content, r.tag, want, in)
			}
		}
	}
}
