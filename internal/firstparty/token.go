// Package firstparty serves Trusted Server's /first-party/* routes (the
// signed creative proxy, click redirect, signer and click rebuilder) and
// rewrites creatives so every resource and click goes through them.
//
// The reference is IABTechLab/trusted-server at main d97bda69; comments cite
// its files as core/<file>:<line> for crates/trusted-server-core/src/<file>.
package firstparty

import (
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// TokenLen is the length of a tstoken: base64url without padding of a
// SHA-256 digest (core/http_util.rs:394-396).
const TokenLen = 43

// Signer mints and checks tstoken values under publisher.proxy_secret.
type Signer struct {
	secret []byte
	aead   cipher.AEAD
}

// NewSigner keys a Signer with the publisher's proxy_secret. The key is
// SHA-256 of the secret (core/http_util.rs:324-326).
func NewSigner(secret string) (*Signer, error) {
	if secret == "" {
		return nil, errors.New("firstparty: proxy_secret is empty")
	}
	key := sha256.Sum256([]byte(secret))
	aead, err := chacha20poly1305.NewX(key[:])
	if err != nil {
		return nil, fmt.Errorf("firstparty: xchacha20-poly1305 key: %w", err)
	}
	return &Signer{secret: []byte(secret), aead: aead}, nil
}

// Token is upstream's compute_encrypted_sha256_token (core/http_util.rs:428-437):
// the signed string is encrypted with XChaCha20-Poly1305 under a nonce derived
// from the secret and the string, so equal inputs give equal tokens
// (core/http_util.rs:328-336), and the token is base64url-nopad(SHA-256("x1" ||
// nonce || ciphertext||tag)) (core/http_util.rs:342-346, 432-436).
func (s *Signer) Token(signed string) string {
	h := sha256.New()
	h.Write([]byte("ts-proxy-x1"))
	h.Write(s.secret)
	h.Write([]byte(signed))
	nonce := h.Sum(nil)[:chacha20poly1305.NonceSizeX]

	raw := make([]byte, 0, 2+len(nonce)+len(signed)+s.aead.Overhead())
	raw = append(raw, "x1"...)
	raw = append(raw, nonce...)
	raw = s.aead.Seal(raw, nonce, []byte(signed), nil)
	sum := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Verify reports whether token is the tstoken of signed. Lengths are public
// (always TokenLen), so only the bytes are compared in constant time, as
// upstream's ct_str_eq does (core/http_util.rs:400-413).
func (s *Signer) Verify(signed, token string) bool {
	want := s.Token(signed)
	return len(token) == len(want) && subtle.ConstantTimeCompare([]byte(want), []byte(token)) == 1
}
