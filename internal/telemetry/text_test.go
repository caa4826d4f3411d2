package telemetry

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// marshals reports whether OTLP's protobuf encoding accepts s as a string
// attribute value, as the exporter's marshalling of a batch does.
func marshals(s string) bool {
	_, err := proto.Marshal(&commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}})
	return err == nil
}

// TestTextIsValidUTF8AndBounded: each invalid byte becomes U+FFFD, a
// long string is cut at a character boundary with a mark, and a fit
// string comes back as it is. The invalid inputs are refused by
// protobuf's marshalling as they are, and accepted after Text.
func TestTextIsValidUTF8AndBounded(t *testing.T) {
	long := strings.Repeat("é", MaxTextBytes) // 2 bytes each
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "/a/b", "/a/b"},
		{"empty", "", ""},
		{"multi-byte", "/café/€", "/café/€"},
		{"invalid byte", "/x\xff", "/x\uFFFD"},
		{"each invalid byte", "/\xff\xfe/", "/\uFFFD\uFFFD/"},
		{"truncated sequence", "/\xe2\x82", "/\uFFFD\uFFFD"},
		{"surrogate half", "/\xed\xa0\x80", "/\uFFFD\uFFFD\uFFFD"},
		{"at the bound", strings.Repeat("a", MaxTextBytes), strings.Repeat("a", MaxTextBytes)},
		{"over the bound", strings.Repeat("a", MaxTextBytes+1), strings.Repeat("a", MaxTextBytes) + cutMark},
		{"cut between characters", "a" + long, "a" + strings.Repeat("é", (MaxTextBytes-1)/2) + cutMark},
		{"invalid and long", strings.Repeat("\xff", 4*MaxTextBytes), strings.Repeat("\uFFFD", MaxTextBytes/3) + cutMark},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in)
			if got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !utf8.ValidString(got) || len(got) > MaxTextBytes+len(cutMark) || !marshals(got) {
				t.Errorf("Text(%q) = %q: not valid UTF-8 within %d bytes", tc.in, got, MaxTextBytes)
			}
			if !utf8.ValidString(tc.in) && marshals(tc.in) {
				t.Errorf("protobuf took %q as it is: the case shows nothing", tc.in)
			}
		})
	}
	fit := "/a/b"
	if n := testing.AllocsPerRun(100, func() { _ = Text(fit) }); n != 0 {
		t.Errorf("Text of a fit string allocates %v times", n)
	}
}

// TestRecordErrorMakesMessageFit: an error quoting a request's bytes is
// recorded as the SDK records one (an "exception" event with its type and
// message, an error status), with the message valid UTF-8.
func TestRecordErrorMakesMessageFit(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	_, span := tp.Tracer("t").Start(t.Context(), "s")
	err := fmt.Errorf("fetch /x?q=\xff: %w", errors.ErrUnsupported)
	RecordError(span, err, "")
	span.End()
	got := rec.Ended()[0]
	if got.Status().Description != "fetch /x?q=\uFFFD: unsupported operation" {
		t.Errorf("status %q", got.Status().Description)
	}
	ev := got.Events()
	if len(ev) != 1 || ev[0].Name != "exception" {
		t.Fatalf("events %+v, want one exception", ev)
	}
	attrs := map[string]string{}
	for _, kv := range ev[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.AsString()
		if !marshals(kv.Value.AsString()) {
			t.Errorf("%s = %q: protobuf refuses it", kv.Key, kv.Value.AsString())
		}
	}
	if attrs["exception.type"] != "*fmt.wrapError" { // as span.RecordError names it
		t.Errorf("exception.type %q, want the error's own type", attrs["exception.type"])
	}
	if attrs["exception.message"] != got.Status().Description {
		t.Errorf("exception.message %q", attrs["exception.message"])
	}
}
