package rewrite

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"golang.org/x/net/html"
)

// The attributes of a start tag as golang.org/x/net/html's Tokenizer reads
// them, with their byte positions in the raw tag. The Tokenizer's public API
// gives each attribute's key (lower-cased) and decoded value but not where
// it is; it keeps the positions internally, as spans of its buffer, and this
// reads them with reflect (which may read unexported fields). This file is
// part of the reference (independence_test.go): it uses nothing of the
// scanner.

// tokAttr is one attribute of a start tag: Key and Val as the Tokenizer's
// TagAttr returns them, and the byte ranges of the raw key and of the raw
// value (without its quotes) in the raw tag.
type tokAttr struct {
	Key, Val string
	KeyAt    [2]int
	ValAt    [2]int
}

// tokenizerAttrs returns every attribute of the raw start tag, in order, as
// the Tokenizer reads it. The Tokenizer drops an attribute whose name
// repeats an earlier one (WHATWG §13.2.5.33: a browser ignores it); to find
// those too, the tag is read again with the names found so far overwritten
// by bytes that spell no name in the tag, of the same length and as much a
// name, until no more appear.
func tokenizerAttrs(raw []byte) ([]tokAttr, error) {
	var all []tokAttr
	seen := map[int]bool{} // KeyAt[0] of the attributes found
	masked := append([]byte(nil), raw...)
	for {
		z := html.NewTokenizer(bytes.NewReader(masked))
		if tt := z.Next(); (tt != html.StartTagToken && tt != html.SelfClosingTagToken) || len(z.Raw()) != len(raw) {
			return nil, fmt.Errorf("%q is not one start tag to the Tokenizer", raw)
		}
		found, err := tokenizerSpans(z, len(raw))
		if err != nil {
			return nil, err
		}
		n := len(all)
		for _, a := range found {
			if seen[a.KeyAt[0]] {
				continue
			}
			seen[a.KeyAt[0]] = true
			mask, ok := absentName(raw, a.KeyAt[1]-a.KeyAt[0])
			if !ok {
				return nil, fmt.Errorf("no name of %d bytes is absent from %q", a.KeyAt[1]-a.KeyAt[0], raw)
			}
			copy(masked[a.KeyAt[0]:], mask)
			all = append(all, a)
		}
		if len(all) == n {
			break
		}
	}
	slices.SortFunc(all, func(a, b tokAttr) int { return a.KeyAt[0] - b.KeyAt[0] })
	return all, nil
}

// absentName returns n bytes from 0x80–0xFF that do not occur in raw, so no
// attribute name of the tag equals them; such bytes continue a name as any
// letter does, and letter case does not change them.
func absentName(raw []byte, n int) ([]byte, bool) {
	for b := 0x80; b <= 0xff; b++ {
		if name := bytes.Repeat([]byte{byte(b)}, n); !bytes.Contains(raw, name) {
			return name, true
		}
	}
	return nil, false
}

// tokenizerSpans returns the attributes of z's current start tag, whose raw
// bytes are n long, with their positions.
func tokenizerSpans(z *html.Tokenizer, n int) ([]tokAttr, error) {
	v := reflect.ValueOf(z).Elem()
	rawSpan, attrs := v.FieldByName("raw"), v.FieldByName("attr")
	if !isSpan(rawSpan) || attrs.Kind() != reflect.Slice || attrs.Type().Elem().Kind() != reflect.Array ||
		attrs.Type().Elem().Len() != 2 || !isSpan(reflect.Zero(attrs.Type().Elem().Elem())) {
		return nil, fmt.Errorf("html.Tokenizer no longer keeps raw span and attr [][2]span: update tokenizerSpans for x/net/html's new layout")
	}
	base := int(rawSpan.Field(0).Int())
	at := func(s reflect.Value) [2]int {
		return [2]int{int(s.Field(0).Int()) - base, int(s.Field(1).Int()) - base}
	}
	out := make([]tokAttr, attrs.Len())
	for i := range out {
		out[i].KeyAt, out[i].ValAt = at(attrs.Index(i).Index(0)), at(attrs.Index(i).Index(1))
		key, val, _ := z.TagAttr()
		out[i].Key, out[i].Val = string(key), string(val)
		if a := out[i]; a.KeyAt[0] <= 0 || a.KeyAt[0] >= a.KeyAt[1] || a.ValAt[0] > a.ValAt[1] || a.ValAt[1] > n {
			return nil, fmt.Errorf("tokenizer spans %v %v outside the tag", a.KeyAt, a.ValAt)
		}
	}
	return out, nil
}

// isSpan reports whether v is a struct of two ints, start and end.
func isSpan(v reflect.Value) bool {
	t := v.Type()
	return v.Kind() == reflect.Struct && t.NumField() == 2 && t.Field(0).Name == "start" && t.Field(1).Name == "end" &&
		t.Field(0).Type.Kind() == reflect.Int && t.Field(1).Type.Kind() == reflect.Int
}

// valueQuote is the quote around the non-empty raw value at r in raw, or 0
// when it is unquoted: an unquoted value starts after '=' or white space,
// since a quote there opens a quoted one (WHATWG §13.2.5.36).
func valueQuote(raw []byte, r [2]int) byte {
	if r[0] > 0 && (raw[r[0]-1] == '"' || raw[r[0]-1] == '\'') {
		return raw[r[0]-1]
	}
	return 0
}
