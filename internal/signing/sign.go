package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ssatd/ssatd/internal/openrtb"
)

// Version is the signing protocol's version, in the payload and in
// ext.trusted_server.version (IABTechLab/trusted-server crates/
// trusted-server-core/src/request_signing/signing.rs:62-63).
const Version = "1.1"

// Scheme is the request_scheme ssatd signs: upstream signs "https" always,
// the publisher's origin being https in production, not the scheme the
// edge was reached by (integrations/prebid.rs:2471-2486).
const Scheme = "https"

// Payload is the signed text: the compact JSON object of version, kid,
// host, scheme, id and ts (Unix milliseconds), in this order, as serde_json
// writes upstream's SigningPayload (signing.rs:65-77, 107-129).
func Payload(kid, host, scheme, id string, ts uint64) []byte {
	var b strings.Builder
	b.WriteString(`{"version":`)
	writeJSONString(&b, Version)
	b.WriteString(`,"kid":`)
	writeJSONString(&b, kid)
	b.WriteString(`,"host":`)
	writeJSONString(&b, host)
	b.WriteString(`,"scheme":`)
	writeJSONString(&b, scheme)
	b.WriteString(`,"id":`)
	writeJSONString(&b, id)
	b.WriteString(`,"ts":`)
	b.WriteString(strconv.FormatUint(ts, 10))
	b.WriteByte('}')
	return []byte(b.String())
}

// writeJSONString writes s as serde_json does, which differs from
// encoding/json: only '"', '\\' and control characters are escaped (as
// \b \f \n \r \t or \u00xx, lowercase), never <, >, & or U+2028/U+2029,
// so the bytes signed here are those upstream would sign.
func writeJSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := s[i]
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`) // not reachable from Rust, whose strings are UTF-8
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// encodeSignature is base64url without padding (signing.rs:159-168).
func encodeSignature(sig []byte) string { return base64.RawURLEncoding.EncodeToString(sig) }

// decodeSignature accepts base64url without padding, then standard base64,
// as upstream's verification does (signing.rs:237-244).
func decodeSignature(s string) ([]byte, error) {
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.StdEncoding.DecodeString(s)
}

// publicJWK is the public key as upstream stores and publishes it: the
// jose-jwk serialisation of an OKP key, kty, crv, x (base64url, no
// padding), then alg and kid (jwks.rs:39-58).
func publicJWK(kid string, pub ed25519.PublicKey) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"kty":"OKP","crv":"Ed25519","x":`)
	writeJSONString(&b, base64.RawURLEncoding.EncodeToString(pub))
	b.WriteString(`,"alg":"EdDSA","kid":`)
	writeJSONString(&b, kid)
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// verifyWithJWK checks sig over payload with the JWK's x, as upstream's
// verify_signature does (signing.rs:192-255): a JWK or signature that
// cannot be used is an error, a signature that does not match is false.
func verifyWithJWK(jwk json.RawMessage, payload []byte, sig string) (bool, error) {
	var k struct {
		X *string `json:"x"`
	}
	if err := json.Unmarshal(jwk, &k); err != nil {
		return false, fmt.Errorf("parse JWK: %w", err)
	}
	if k.X == nil {
		return false, errors.New("JWK missing 'x' parameter")
	}
	pub, err := base64.RawURLEncoding.DecodeString(*k.X)
	if err != nil {
		return false, fmt.Errorf("decode public key: %w", err)
	}
	if len(pub) != ed25519.PublicKeySize {
		return false, errors.New("public key must be 32 bytes")
	}
	raw, err := decodeSignature(sig)
	if err != nil {
		return false, fmt.Errorf("decode signature: %w", err)
	}
	if len(raw) != ed25519.SignatureSize {
		return false, errors.New("signature must be 64 bytes")
	}
	return ed25519.Verify(pub, payload, raw), nil
}

// Ext is ext.trusted_server for one bid request, as upstream's Prebid
// provider writes it (integrations/prebid.rs:1942-1970, openrtb.rs:
// 132-148): request_host and request_scheme always, signing enabled or
// not; version, signature, kid and ts when the request is signed. host is the publisher's domain
// (the request's site.domain), id the bid request's id.
func (f *Family) Ext(id, host string) *openrtb.TrustedServerExt {
	ext := &openrtb.TrustedServerExt{RequestHost: host, RequestScheme: Scheme}
	if !f.enabled || f.keys == nil {
		return ext
	}
	kid, key := f.keys.signer()
	if key == nil {
		return ext // New refuses this when enabled; a store emptied since is not signing
	}
	ts := uint64(f.now().UnixMilli())
	ext.Version = Version
	ext.Kid = kid
	ext.TS = ts
	ext.Signature = encodeSignature(ed25519.Sign(key, Payload(kid, host, Scheme, id, ts)))
	return ext
}
