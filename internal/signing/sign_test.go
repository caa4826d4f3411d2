package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
)

// TestRFC8032Vector1KeyEncoding catches a key file, JWK x or signature
// encoded otherwise than upstream's: a seed stored as upstream's secret
// store holds it (standard base64, signing.rs:31-53) must give the public
// key and the signature of RFC 8032 §7.1 TEST 1 (empty message), the
// public key as base64url without padding in the JWK (jwks.rs:39-58), the
// signature base64url without padding (signing.rs:159-168).
func TestRFC8032Vector1KeyEncoding(t *testing.T) {
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	pub, _ := hex.DecodeString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	sig, _ := hex.DecodeString("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
	dir := t.TempDir()
	writeKeyDir(t, dir, "kid-a", base64.StdEncoding.EncodeToString(seed), string(publicJWK("kid-a", pub)))

	s, err := openKeyStore(dir, nil, time.Now, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	kid, key := s.signer()
	if kid != "kid-a" || !bytes.Equal(key.Public().(ed25519.PublicKey), pub) {
		t.Fatalf("loaded kid %q public %x, want kid-a %x", kid, key.Public(), pub)
	}
	if got := encodeSignature(ed25519.Sign(key, nil)); got != base64.RawURLEncoding.EncodeToString(sig) {
		t.Errorf("signature %s, want RFC 8032's %x base64url", got, sig)
	}
	want := `{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","alg":"EdDSA","kid":"kid-a"}`
	if got := string(publicJWK("kid-a", pub)); got != want {
		t.Errorf("JWK\n%s\nwant\n%s", got, want)
	}
	ok, err := verifyWithJWK(publicJWK("kid-a", pub), nil, base64.StdEncoding.EncodeToString(sig))
	if err != nil || !ok {
		t.Errorf("standard-base64 signature not accepted (signing.rs:237-244): %v %v", ok, err)
	}
}

func writeKeyDir(t *testing.T, dir, kid, seedB64, jwk string) {
	t.Helper()
	for name, text := range map[string]string{
		currentKidFile: kid, activeKidsFile: kid,
		filepath.Join(jwkDir, kid): jwk, filepath.Join(secretDir, kid): seedB64,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPayloadIsUpstreamsJSON catches a signed payload whose bytes differ
// from serde_json's compact serialisation of upstream's SigningPayload
// (signing.rs:65-77, 340-360): field order, no spaces, and serde's string
// escaping, which leaves <, >, & and U+2028 alone where encoding/json
// escapes them.
func TestPayloadIsUpstreamsJSON(t *testing.T) {
	for _, tc := range []struct {
		kid, host, id string
		ts            uint64
		want          string
	}{
		{"kid-abc", "example.com", "req-123", 1_706_900_000,
			`{"version":"1.1","kid":"kid-abc","host":"example.com","scheme":"https","id":"req-123","ts":1706900000}`},
		{"k", "a<b>&c\u2028", "q\"\\\n\t\x01\x7f", 0,
			"{\"version\":\"1.1\",\"kid\":\"k\",\"host\":\"a<b>&c\u2028\",\"scheme\":\"https\",\"id\":\"q\\\"\\\\\\n\\t\\u0001\x7f\",\"ts\":0}"},
	} {
		got := string(Payload(tc.kid, tc.host, Scheme, tc.id, tc.ts))
		if got != tc.want {
			t.Errorf("payload\n%s\nwant\n%s", got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("payload %s is not JSON", got)
		}
	}
}

// TestExtSignsWhenEnabled catches ext.trusted_server without
// request_host and request_scheme, or signed when signing is off, or with
// a signature that does not verify over the payload of its own fields.
func TestExtSignsWhenEnabled(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Init(dir, time.Now); err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_764_763_200_123)
	for _, enabled := range []bool{true, false} {
		f, err := New(config.RequestSigningConfig{Enabled: enabled, KeyDir: dir}, Deps{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		ext := f.Signer()("req-1", "www.pub.example")
		if ext.RequestHost != "www.pub.example" || ext.RequestScheme != "https" {
			t.Errorf("enabled=%v: request_host %q request_scheme %q", enabled, ext.RequestHost, ext.RequestScheme)
		}
		if !enabled {
			if ext.Signature != "" || ext.Kid != "" || ext.Version != "" || ext.TS != 0 {
				t.Errorf("signed with signing off: %+v", ext)
			}
			continue
		}
		if ext.Version != "1.1" || ext.TS != 1_764_763_200_123 || ext.Kid == "" {
			t.Errorf("ext %+v", ext)
		}
		jwk, err := f.keys.jwkOf(ext.Kid)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := verifyWithJWK(jwk, Payload(ext.Kid, ext.RequestHost, ext.RequestScheme, "req-1", ext.TS), ext.Signature)
		if err != nil || !ok {
			t.Errorf("signature does not verify: %v %v", ok, err)
		}
	}
}

// TestNewRefusesEnabledWithoutKey catches a daemon that would start
// signing with no key (upstream fails each bid request instead,
// signing.rs:138-157), and a corrupt key file taken for a key.
func TestNewRefusesEnabledWithoutKey(t *testing.T) {
	corrupt := t.TempDir()
	writeKeyDir(t, corrupt, "kid-a", "not base64!", `{"kty":"OKP"}`)
	for _, tc := range []struct {
		name string
		cfg  config.RequestSigningConfig
	}{
		{"no directory", config.RequestSigningConfig{Enabled: true}},
		{"empty directory", config.RequestSigningConfig{Enabled: true, KeyDir: t.TempDir()}},
		{"corrupt key", config.RequestSigningConfig{KeyDir: corrupt}},
	} {
		if _, err := New(tc.cfg, Deps{}); err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, tc.cfg)
		}
	}
	if _, err := New(config.RequestSigningConfig{KeyDir: t.TempDir()}, Deps{}); err != nil {
		t.Errorf("an empty directory with signing off is an empty store: %v", err)
	}
}

// BenchmarkExt is the cost signing adds to one bid request.
func BenchmarkExt(b *testing.B) {
	dir := b.TempDir()
	if _, _, err := Init(dir, time.Now); err != nil {
		b.Fatal(err)
	}
	f, err := New(config.RequestSigningConfig{Enabled: true, KeyDir: dir}, Deps{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if f.Ext("0123456789abcdef0123456789abcdef", "www.pub.example").Signature == "" {
			b.Fatal("unsigned")
		}
	}
}
