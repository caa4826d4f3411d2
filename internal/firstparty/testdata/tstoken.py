#!/usr/bin/env python3
"""Independent Trusted Server tstoken calculator (not derived from the Go signer).

Computes tstoken exactly as upstream http_util.rs does (IABTechLab/trusted-server
main d97bda69, crates/trusted-server-core/src/http_util.rs:323-346 and 428-437):

    key   = SHA-256(secret)
    nonce = SHA-256(b"ts-proxy-x1" || secret || S)[:24]
    raw   = b"x1" || nonce || XChaCha20-Poly1305(key, nonce, S, aad=b"")
    token = base64url-nopad(SHA-256(raw))

XChaCha20-Poly1305 is built here from draft-irtf-cfrg-xchacha-03: HChaCha20
(section 2.2) written out below, then the IETF ChaCha20-Poly1305 AEAD of the
`cryptography` package under the subkey with nonce 0x00000000 || nonce[16:24]
(section 2.3). The script checks itself against the draft's HChaCha20 vector
(section 2.2.1) and AEAD vector (appendix A.3.1) before printing anything.

Usage: python3 tstoken.py SECRET SIGNED_STRING...
Prints one line per input: SIGNED_STRING<TAB>TOKEN
"""
import base64
import hashlib
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

MASK = 0xFFFFFFFF


def _rotl(v, c):
    return ((v << c) & MASK) | (v >> (32 - c))


def _quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK; s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK; s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK; s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK; s[b] = _rotl(s[b] ^ s[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """draft-irtf-cfrg-xchacha-03 section 2.2: the ChaCha20 block function
    without the final addition, keeping words 0..3 and 12..15."""
    assert len(key) == 32 and len(nonce16) == 16
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    s += list(struct.unpack("<8L", key))
    s += list(struct.unpack("<4L", nonce16))
    for _ in range(10):
        _quarter(s, 0, 4, 8, 12); _quarter(s, 1, 5, 9, 13)
        _quarter(s, 2, 6, 10, 14); _quarter(s, 3, 7, 11, 15)
        _quarter(s, 0, 5, 10, 15); _quarter(s, 1, 6, 11, 12)
        _quarter(s, 2, 7, 8, 13); _quarter(s, 3, 4, 9, 14)
    return struct.pack("<8L", *(s[0:4] + s[12:16]))


def xchacha20poly1305_encrypt(key, nonce24, plaintext, aad=b""):
    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).encrypt(b"\0\0\0\0" + nonce24[16:], plaintext, aad)


def self_check():
    # draft-irtf-cfrg-xchacha-03 section 2.2.1
    sub = hchacha20(bytes(range(32)), bytes.fromhex("000000090000004a0000000031415927"))
    assert sub.hex() == (
        "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"), sub.hex()
    # draft-irtf-cfrg-xchacha-03 appendix A.3.1
    pt = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one "
          b"tip for the future, sunscreen would be it.")
    out = xchacha20poly1305_encrypt(
        bytes(range(0x80, 0xA0)), bytes(range(0x40, 0x58)), pt,
        bytes.fromhex("50515253c0c1c2c3c4c5c6c7"))
    want = ("bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
            "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
            "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
            "21f9664c97637da9768812f615c68b13b52e" "c0875924c1c7987947deafd8780acf49")
    assert out.hex() == want, out.hex()


def tstoken(secret: str, signed: str) -> str:
    sec, msg = secret.encode(), signed.encode()
    key = hashlib.sha256(sec).digest()
    nonce = hashlib.sha256(b"ts-proxy-x1" + sec + msg).digest()[:24]
    raw = b"x1" + nonce + xchacha20poly1305_encrypt(key, nonce, msg)
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).rstrip(b"=").decode()


if __name__ == "__main__":
    self_check()
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for s in sys.argv[2:]:
        print(f"{s}\t{tstoken(sys.argv[1], s)}")
