package firstparty

import (
	"reflect"
	"testing"
)

// The url crate's serializer keeps '*' and escapes '~'; net/url does the
// opposite, and a signed string built with it would not match upstream's.
func TestFormEncodeIsWHATWGUrlencoded(t *testing.T) {
	cases := []struct {
		pairs []Pair
		want  string
	}{
		{[]Pair{{"c", "3"}, {"b", "2"}}, "c=3&b=2"},
		{[]Pair{{"q", "a b"}}, "q=a+b"},
		{[]Pair{{"u", "https://adv.example/~*"}}, "u=https%3A%2F%2Fadv.example%2F%7E*"},
		{[]Pair{{"n", "été"}}, "n=%C3%A9t%C3%A9"},
		{[]Pair{{"k", ""}, {"", "v"}}, "k=&=v"},
		{[]Pair{{"a&b", "c=d+e"}}, "a%26b=c%3Dd%2Be"},
	}
	for _, c := range cases {
		if got := formEncode(c.pairs); got != c.want {
			t.Errorf("formEncode(%v) = %q, want %q", c.pairs, got, c.want)
		}
	}
}

func TestFormParseIsLenientAsUpstream(t *testing.T) {
	cases := []struct {
		in   string
		want []Pair
	}{
		{"a=1&b=2", []Pair{{"a", "1"}, {"b", "2"}}},
		{"&&a=1&", []Pair{{"a", "1"}}},
		{"flag", []Pair{{"flag", ""}}},
		{"q=a+b%20c", []Pair{{"q", "a b c"}}},
		{"p=100%&x=%zz&y=%4", []Pair{{"p", "100%"}, {"x", "%zz"}, {"y", "%4"}}},
		{"e=a=b", []Pair{{"e", "a=b"}}},
		{"s=%FF%FE", []Pair{{"s", "\uFFFD\uFFFD"}}},
		{"s=%F0%9F%98", []Pair{{"s", "\uFFFD"}}},
		{"s=%E0%80", []Pair{{"s", "\uFFFD\uFFFD"}}},
	}
	for _, c := range cases {
		if got := formParse(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("formParse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
