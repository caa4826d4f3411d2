package firstparty

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/ssatd/ssatd/internal/testutil"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The cipher the token rests on, checked against the published
// AEAD_XChaCha20_Poly1305 vector of draft-irtf-cfrg-xchacha-03 appendix A.3.1.
func TestXChaCha20Poly1305MatchesDraftVectorA31(t *testing.T) {
	key := mustHex(t, "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
	nonce := mustHex(t, "404142434445464748494a4b4c4d4e4f5051525354555657")
	aad := mustHex(t, "50515253c0c1c2c3c4c5c6c7")
	pt := []byte("Ladies and Gentlemen of the class of '99: If I could offer you only one " +
		"tip for the future, sunscreen would be it.")
	want := mustHex(t, "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"+
		"731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"+
		"2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"+
		"21f9664c97637da9768812f615c68b13b52e"+"c0875924c1c7987947deafd8780acf49")
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	if got := aead.Seal(nil, nonce, pt, aad); !bytes.Equal(got, want) {
		t.Fatalf("ciphertext||tag\n got %x\nwant %x", got, want)
	}
	back, err := aead.Open(nil, nonce, want, aad)
	if err != nil || !bytes.Equal(back, pt) {
		t.Fatalf("open: %v %q", err, back)
	}
}

// Vectors computed apart from this package's signer, by testdata/tstoken.py
// (HChaCha20 written from draft-irtf-cfrg-xchacha-03 §2.2 over the
// `cryptography` package's IETF ChaCha20-Poly1305; it checks itself against the
// draft's §2.2.1 and A.3.1 vectors first):
//
//	python3 testdata/tstoken.py unit-test-proxy-secret 'https://cdn.example/a.png' ...
//	python3 testdata/tstoken.py 'another secret ✓' 'http://127.0.0.1:9000/img.png'
//
// The first three are also issue 33's vectors (a second implementation's), and
// unit-test-proxy-secret is upstream's test secret (core/settings.rs:4416).
var tokenVectors = []struct{ secret, signed, token string }{
	{"unit-test-proxy-secret", "https://cdn.example/a.png", "khZxp4u3sJa1nEmYtIZeJ6uaS1IRKef9MMtmMPgDWaw"},
	{"unit-test-proxy-secret", "https://cdn.example/a.png?x=1", "ErEYFs8NzlbhKXVjbiUguumWH9Ln6tf0pKPQGYaqP2w"},
	{"unit-test-proxy-secret", "https://cdn.example/asset.js?c=3&b=2", "MkJUHZnYuVI-pUgjx12qG5n3HkJCMCH_jOrW9L3etLE"},
	{"unit-test-proxy-secret", "https://cdn.example/a.png?x=1&tsexp=1700000000", "6aizb6mC2JSKdkta30YIKqTOEDTknG2b54eJxakOI0s"},
	{"unit-test-proxy-secret", "https://ad.example:8443/c/x.js?q=a+b&u=https%3A%2F%2Fadv.example%2F%7E*", "oD3vulFQBhLr6kFV5lO1580O6CIIkgC5JiTaXG70ecg"},
	{"unit-test-proxy-secret", "https://cdn.example/caf%C3%A9.png?n=%C3%A9t%C3%A9", "Rp_qkKkNJRulrHGvvkqR51M7yQj-x6yx5uHlX-mPxo0"},
	{"unit-test-proxy-secret", "", "-QMiNj0DC0QCBQT_ydHli0DBzdPSnb7MaOAbKA2QDkU"},
	{"another secret ✓", "http://127.0.0.1:9000/img.png", "q5fZs9QjgoLaVmWOqQNnfn2GDHDKQnJMABUPraV1ve0"},
}

func TestTokenMatchesIndependentVectors(t *testing.T) {
	for _, v := range tokenVectors {
		s, err := NewSigner(v.secret)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Token(v.signed)
		if got != v.token {
			t.Errorf("Token(%q) under %q = %s, want %s", v.signed, v.secret, got, v.token)
		}
		if len(got) != TokenLen {
			t.Errorf("len %d, want %d", len(got), TokenLen)
		}
		if !s.Verify(v.signed, v.token) {
			t.Errorf("Verify(%q) refused its own vector", v.signed)
		}
	}
}

func TestVerifyRefusesTamperedTokenAndURL(t *testing.T) {
	s, _ := NewSigner("unit-test-proxy-secret")
	const u, tok = "https://cdn.example/a.png?x=1", "ErEYFs8NzlbhKXVjbiUguumWH9Ln6tf0pKPQGYaqP2w"
	flipped := []byte(tok)
	flipped[0] ^= 1
	other, _ := NewSigner("unit-test-proxy-secret-2")
	cases := []struct {
		name, signed, token string
		s                   *Signer
	}{
		{"flipped byte", u, string(flipped), s},
		{"other url", "https://cdn.example/a.png?x=2", tok, s},
		{"empty token", u, "", s},
		{"prefix of token", u, tok[:42], s},
		{"token plus a byte", u, tok + "A", s},
		{"other secret", u, tok, other},
		{"upstream's bad_token (core/proxy.rs:2715)", u, strings.Repeat("A", 43), s},
	}
	for _, c := range cases {
		if c.s.Verify(c.signed, c.token) {
			t.Errorf("%s: verified", c.name)
		}
	}
}

func TestNewSignerRefusesEmptySecret(t *testing.T) {
	if _, err := NewSigner(""); err == nil {
		t.Fatal("empty secret accepted")
	}
}

// A URL signed by the independent Python signer (Trusted Server's scheme,
// not this package's code) is fetched through the route over loopback.
func TestProxyAcceptsURLSignedByIndependentSigner(t *testing.T) {
	py := testutil.RequireTool(t, "python3")
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "signed elsewhere "+r.URL.RawQuery) })
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{})
	clear := tp.URL + "/a.png?x=1&y=a+b"
	out, err := exec.Command(py, "testdata/tstoken.py", testSecret, clear).Output()
	if err != nil {
		testutil.SkipOrFail(t, "testdata/tstoken.py (needs the python3 cryptography package): %v", err)
	}
	_, tok, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !ok || len(tok) != TokenLen {
		t.Fatalf("tstoken.py printed %q", out)
	}
	u := srv.URL + PathProxy + "?tsurl=" + url.QueryEscape(tp.URL+"/a.png") + "&x=1&y=a+b&tstoken=" + tok
	if a := get(t, u); a.code != 200 || a.body != "signed elsewhere x=1&y=a+b" {
		t.Fatalf("got %d %q", a.code, a.body)
	}
}
