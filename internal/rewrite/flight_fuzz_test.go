package rewrite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The Flight differential: a generated Next.js page, its Flight stream
// split into pushes at random places, is rewritten in random reads; the
// stream read back from the output (x/net/html for the scripts,
// encoding/json for the strings, a row reader of its own here) must be the
// generated rows with the request host, except the rows the rules say
// keep their bytes. Nothing here shares code with flight.go.

type genRow struct {
	tag     byte   // 0: a JSON row; 'T' text; 'A' binary; 'I' a tagged newline row
	content string // without the row's end
	keep    bool   // the rules leave it as it is
}

// genAtoms are the pieces contents are made of: a push splits a content
// only between two of them.
var genAtoms = []string{"hello ", "é", "😀", "\u2028", "<", ">", "&", `"`, `\`, "\uFFFD",
	" https://origin.pub.example/p", " //origin.pub.example/q?a=1", " http://ORIGIN.pub.example/",
	" https://www.pub.example/", " origin.pub.example", " https://origin.pub.example.evil/"}

func genContent(rng *rand.Rand, newline bool) []string {
	var atoms []string
	for range rng.Intn(8) {
		a := genAtoms[rng.Intn(len(genAtoms))]
		if newline && rng.Intn(6) == 0 {
			a = "\n"
		}
		atoms = append(atoms, a)
	}
	return atoms
}

// genFlightPage builds a page and its rows. Pushes split the stream
// between any two characters, inside a text row's header too; binary rows
// go in base64 pushes of their own.
func genFlightPage(rng *rand.Rand) (page string, rows []genRow) {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>t</title></head><body><p>a</p>")
	var chunk strings.Builder
	pushData := func() {
		if chunk.Len() > 0 {
			fmt.Fprintf(&b, `<script>self.__next_f.push([1,"%s"])</script>`, jsonChunk(rng, chunk.String()))
			chunk.Reset()
			if rng.Intn(3) == 0 {
				b.WriteString([]string{"\n", "<div>x</div>", "<!-- c -->", `<script>var a=1</script>`}[rng.Intn(4)])
			}
		}
	}
	maybePush := func() {
		if rng.Intn(3) == 0 {
			pushData()
		}
	}
	// writeSplit writes text, and may end the push between any two of its
	// characters, inside a reference too.
	writeSplit := func(text string) {
		for _, r := range text {
			chunk.WriteRune(r)
			if rng.Intn(25) == 0 {
				pushData()
			}
		}
	}
	b.WriteString(`<script>(self.__next_f=self.__next_f||[]).push([0])</script>`)
	for id := range 1 + rng.Intn(8) {
		hexID := strconv.FormatInt(int64(id), 16)
		switch k := rng.Intn(4); k {
		case 0, 1: // JSON, or tagged, newline rows
			r := genRow{}
			if k == 1 {
				r.tag = 'I'
			}
			atoms := genContent(rng, false)
			r.content = jsonRowText(strings.Join(atoms, ""))
			rows = append(rows, r)
			chunk.WriteString(hexID + ":")
			if r.tag != 0 {
				chunk.WriteByte(r.tag)
			}
			writeSplit(r.content)
			chunk.WriteString("\n")
			maybePush()
		case 2: // a text row
			atoms := genContent(rng, true)
			content := strings.Join(atoms, "")
			header := hexID + ":T" + strconv.FormatInt(int64(len(content)), 16) + ","
			r := genRow{tag: 'T', content: content}
			if cut := rng.Intn(len(header) + 4); cut > 0 && cut < len(header) {
				// Split from the tag on: the row keeps its bytes.
				r.keep = cut >= len(hexID)+2
				chunk.WriteString(header[:cut])
				pushData()
				chunk.WriteString(header[cut:])
			} else {
				chunk.WriteString(header)
			}
			for _, a := range atoms {
				writeSplit(a)
				maybePush()
			}
			rows = append(rows, r)
		case 3: // a binary row, in base64
			pushData()
			raw := make([]byte, rng.Intn(20))
			for i := range raw {
				raw[i] = byte(rng.Intn(256))
			}
			raw = append(raw, " https://origin.pub.example/"...)
			row := hexID + ":A" + strconv.FormatInt(int64(len(raw)), 16) + "," + string(raw)
			rows = append(rows, genRow{tag: 'A', content: string(raw), keep: true})
			fmt.Fprintf(&b, `<script>self.__next_f.push([3,"%s"])</script>`, base64.StdEncoding.EncodeToString([]byte(row)))
		}
	}
	pushData()
	b.WriteString("</body></html>")
	return b.String(), rows
}

// jsonRowText is a JSON row's text for s: a JSON string.
func jsonRowText(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}

// jsonChunk writes s as the content of a JSON string, as Next.js's
// htmlEscapeJsonString(JSON.stringify(s)) does, with non-ASCII written
// raw or as \u escapes at random, and U+FFFD now and then as a lone
// surrogate, which the stream's encoder turns into U+FFFD.
func jsonChunk(rng *rand.Rand, s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029 || r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == utf8.RuneError && rng.Intn(2) == 0:
			b.WriteString(`\udc00`)
		case r >= 0x10000 && rng.Intn(2) == 0:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case r >= 0x80 && r < 0x10000 && rng.Intn(2) == 0:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var refPushRE = regexp.MustCompile(`^self\.__next_f\.push\(\[([13]),("(?:[^"\\]|\\.)*")\]\)$`)

// refFlightStream reads the Flight stream out of a page, and the page's
// other tokens.
func refFlightStream(t *testing.T, page string) (stream []byte, rest string) {
	z := html.NewTokenizer(strings.NewReader(page))
	var other strings.Builder
	inScript := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return stream, other.String()
		}
		raw := string(z.Raw())
		if tt == html.TextToken && inScript {
			if m := refPushRE.FindStringSubmatch(raw); m != nil {
				var s string
				if err := json.Unmarshal([]byte(m[2]), &s); err != nil {
					t.Fatalf("push string %s: %v", m[2], err)
				}
				if m[1] == "3" {
					b, err := base64.StdEncoding.DecodeString(s)
					if err != nil {
						t.Fatalf("base64 push %q: %v", s, err)
					}
					stream = append(stream, b...)
				} else {
					stream = append(stream, s...)
				}
				other.WriteString("<push>")
				continue
			}
		}
		if tt == html.StartTagToken || tt == html.EndTagToken {
			name, _ := z.TagName()
			inScript = tt == html.StartTagToken && string(name) == "script"
		}
		other.WriteString(raw)
	}
}

// refRows reads a Flight stream's rows as React's client does, failing
// the test where the stream does not read as rows.
func refRows(t *testing.T, s []byte) []genRow {
	var rows []genRow
	for len(s) > 0 {
		colon := bytes.IndexByte(s, ':')
		if colon < 0 {
			t.Fatalf("row without ':' in %q", s)
		}
		s = s[colon+1:]
		switch tag := s[0]; tag {
		case 'T', 'A':
			comma := bytes.IndexByte(s, ',')
			n, err := strconv.ParseUint(string(s[1:comma]), 16, 32)
			if err != nil || comma+1+int(n) > len(s) {
				t.Fatalf("length row %q: length %d, %d bytes left", s[:min(len(s), 40)], n, len(s)-comma-1)
			}
			rows = append(rows, genRow{tag: tag, content: string(s[comma+1 : comma+1+int(n)])})
			s = s[comma+1+int(n):]
		default:
			nl := bytes.IndexByte(s, '\n')
			if nl < 0 {
				t.Fatalf("newline row without its end: %q", s)
			}
			r := genRow{content: string(s[:nl])}
			if tag == 'I' {
				r.tag, r.content = tag, r.content[1:]
			}
			rows = append(rows, r)
			s = s[nl+1:]
		}
	}
	return rows
}

var refOriginRE = regexp.MustCompile(`(?i)(https?://|//)origin\.pub\.example(/|\?|"|$)`)

// refRewrite is the rows' text with the request host, as the page-level
// text rules take it: the absolute forms only.
func refRewrite(s string) string {
	return refOriginRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := refOriginRE.FindStringSubmatch(m)
		pre := sm[1]
		if strings.HasPrefix(strings.ToLower(pre), "http") {
			pre = "https://"
		}
		return pre + "www.pub.example" + sm[2]
	})
}

func checkFlightPage(t *testing.T, page string, rows []genRow, seed int64) {
	t.Helper()
	var split func(string) *splitReader
	if seed >= 0 {
		split = func(s string) *splitReader { return &splitReader{s: s, rng: rand.New(rand.NewSource(seed))} }
	}
	got, _ := rewriteInline(t, page, true, split)
	gotStream, gotRest := refFlightStream(t, got)
	_, inRest := refFlightStream(t, page)
	if gotRest != inRest {
		t.Fatalf("the page outside its pushes changed:\n got %q\nwant %q", gotRest, inRest)
	}
	gotRows := refRows(t, gotStream)
	if len(gotRows) != len(rows) {
		t.Fatalf("%d rows, want %d\npage %q\nout  %q", len(gotRows), len(rows), page, got)
	}
	for i, r := range rows {
		want := r
		if !r.keep {
			want.content = refRewrite(r.content)
		}
		want.keep = false
		if gotRows[i] != want {
			t.Fatalf("row %d: got %c %q\nwant %c %q\npage %q\nout  %q", i, gotRows[i].tag, gotRows[i].content, want.tag, want.content, page, got)
		}
	}
}

func TestFlightDifferential(t *testing.T) {
	for seed := range int64(400) {
		page, rows := genFlightPage(rand.New(rand.NewSource(seed)))
		checkFlightPage(t, page, rows, seed%7-1)
	}
}

func FuzzFlightPage(f *testing.F) {
	for _, s := range []int64{0, 1, 2, 3, 42} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, gen, reads int64) {
		page, rows := genFlightPage(rand.New(rand.NewSource(gen)))
		checkFlightPage(t, page, rows, reads)
	})
}
