package server

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// scanAll feeds stream to a fresh scanner in pieces cut at cuts and
// returns the fault and the ordinal of the request it was found in.
func scanAll(stream string, limit int64, cuts ...int) (framingFault, int64) {
	s := newScanner(limit)
	prev := 0
	for _, c := range append(cuts, len(stream)) {
		if f := s.feed([]byte(stream[prev:c])); f != faultNone {
			return f, s.requests
		}
		prev = c
	}
	return faultNone, s.requests
}

// TestScannerFindsFaultsAtEverySplit catches a fault missed, or found in
// the wrong request, because a field name, a Content-Length value or a
// line end is split across reads: every stream is fed whole, one byte at a
// time, and cut in two at every offset.
func TestScannerFindsFaultsAtEverySplit(t *testing.T) {
	const h = "Host: x\r\n"
	tests := []struct {
		name, stream string
		fault        framingFault
		request      int64 // ordinal of the refused request, or requests scanned
	}{
		{"issue 18", "POST /a HTTP/1.0\r\n" + h + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled, faultTransferEncoding, 0},
		{"mixed case", "GET / HTTP/1.1\r\ntRaNsFeR-eNcOdInG: x\r\n\r\n", faultTransferEncoding, 0},
		{"space before colon", "GET / HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n", faultTransferEncoding, 0},
		{"after a body", "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcdGET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", faultTransferEncoding, 1},
		{"obs-fold", "GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", faultObsFold, 0},
		{"differing lengths", "POST / HTTP/1.1\r\nContent-Length: 4\r\ncontent-length: 5\r\n\r\n", faultContentLength, 0},
		{"two numbers in one", "POST / HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\n", faultContentLength, 0},
		{"sign", "POST / HTTP/1.1\r\nContent-Length: +4\r\n\r\n", faultContentLength, 0},
		{"empty length", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", faultContentLength, 0},
		{"64 bits", "POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", faultContentLength, 0},
		{"too large", "GET / HTTP/1.1\r\nX: " + string(bytes.Repeat([]byte("a"), 200)) + "\r\n\r\n", faultTooLarge, 0},
		// Not faults: names that only start like the two, a body holding
		// header text, the largest length, leading zeros, bare LF.
		{"longer names", "GET / HTTP/1.1\r\nTransfer-Encodings: x\r\nContent-Lengthy: 9\r\nTransfer-Encodin: y\r\n\r\n", faultNone, 1},
		{"header text in a body", "POST / HTTP/1.1\r\nContent-Length: 32\r\n\r\nTransfer-Encoding: chunked\r\n\r\n\r\nGET / HTTP/1.1\n\n", faultNone, 2},
		{"leading zeros, bare LF", "POST / HTTP/1.1\nContent-Length: 0002\n\nabGET / HTTP/1.1\n\n", faultNone, 2},
		{"TE name in the request line", "GET /Transfer-Encoding:x HTTP/1.1\r\n\r\n", faultNone, 1},
	}
	for _, tt := range tests {
		limit := int64(150)
		check := func(how string, cuts ...int) {
			f, n := scanAll(tt.stream, limit, cuts...)
			if f != tt.fault || n != tt.request {
				t.Errorf("%s, %s: fault %d in request %d, want %d in %d", tt.name, how, f, n, tt.fault, tt.request)
			}
		}
		check("whole")
		var bytewise []int
		for i := 1; i < len(tt.stream); i++ {
			bytewise = append(bytewise, i)
			check("cut at "+strconv.Itoa(i), i)
		}
		check("byte by byte", bytewise...)
	}
}

// messageEnds feeds stream one byte at a time and returns the offsets at
// which the scanner saw each request end (after its body), and the fault
// if it found one.
func messageEnds(stream []byte) ([]int, framingFault) {
	s := newScanner(1 << 20)
	var ends []int
	done := func() int64 {
		if s.state == sBody {
			return s.requests - 1
		}
		return s.requests
	}
	for i := range stream {
		before := done()
		if f := s.feed(stream[i : i+1]); f != faultNone {
			return ends, f
		}
		if done() > before {
			ends = append(ends, i+1)
		}
	}
	return ends, faultNone
}

// netHTTPEnds reads stream with net/http's request parser, bodies included,
// and returns where each request it accepts ends, stopping at the first it
// refuses or that uses chunked framing (which the scanner always refuses).
func netHTTPEnds(stream []byte) []int {
	src := bytes.NewReader(stream)
	br := bufio.NewReader(src)
	var ends []int
	for {
		r, err := http.ReadRequest(br)
		if err != nil || len(r.TransferEncoding) > 0 {
			return ends
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return ends
		}
		ends = append(ends, len(stream)-src.Len()-br.Buffered())
	}
}

// FuzzScannerAgreesWithNetHTTP catches the scanner framing a stream
// differently from net/http, which would let a request through unseen:
// wherever the scanner finds no fault, every request net/http reads ends
// where the scanner says it does.
func FuzzScannerAgreesWithNetHTTP(f *testing.F) {
	for _, s := range []string{
		"POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled,
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcdGET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\n\n",
		"GET / HTTP/1.1\r\nX: a\r\n b\r\nContent-Length: 1\r\n\r\nzGET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length : 2\r\n\r\nabGET / HTTP/1.1\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		ends, fault := messageEnds(stream)
		want := netHTTPEnds(stream)
		for i, end := range want {
			if fault != faultNone && i >= len(ends) {
				return // refused from here on
			}
			if i >= len(ends) || ends[i] != end {
				t.Fatalf("%q: net/http ends requests at %v, the scanner at %v (fault %d)", stream, want, ends, fault)
			}
		}
	})
}

// BenchmarkScanBrowserRequest is the scanner's cost for a typical
// browser navigation's header block.
func BenchmarkScanBrowserRequest(b *testing.B) {
	req := []byte("GET /news/2026/12/01/a-long-article-path?utm_source=x HTTP/1.1\r\n" +
		"Host: www.pub.example\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
		"Accept-Language: en-GB,en;q=0.9\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n" +
		"Cookie: euconsent-v2=" + string(bytes.Repeat([]byte("C"), 400)) + "; session=abcdef0123456789\r\n" +
		"Sec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Site: none\r\nUpgrade-Insecure-Requests: 1\r\n\r\n")
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		s := newScanner(1 << 20)
		if s.feed(req) != faultNone {
			b.Fatal("fault")
		}
	}
}
