// Package telemetry holds what makes a string from outside ssatd (a
// request's path or method, an error that quotes one) fit for the places
// ssatd reports from: span attributes, log fields and metric labels.
package telemetry

import (
	"reflect"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// MaxTextBytes bounds a reported string. A path can be as long as
// server.max_header_bytes allows (64 KiB by default); a kilobyte keeps
// what tells requests apart while one client cannot make every span and
// access line as large as its request.
const MaxTextBytes = 1024

// cutMark ends a string that Text shortened, so that a reader knows the
// request carried more.
const cutMark = "…"

// Text is s as valid UTF-8, each byte that is not part of a UTF-8
// sequence replaced by U+FFFD (as zap's JSON encoder and Go's range loop
// read it), and cut at a character boundary to at most MaxTextBytes bytes
// followed by "…". OTLP carries attributes as protobuf strings, which must
// be valid UTF-8: the exporter refuses to marshal a batch holding one
// invalid byte, so one request for /x%ff lost every span exported with it
// (https://protobuf.dev/programming-guides/proto3/#scalar, "string": "A
// string must always contain UTF-8 encoded or 7-bit ASCII text").
// Prometheus refuses an invalid label value too. A string that is
// already fit is returned as it is, without allocating.
func Text(s string) string {
	if len(s) <= MaxTextBytes && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), MaxTextBytes) + len(cutMark))
	for i := 0; i < len(s); {
		// An invalid byte decodes as utf8.RuneError with size 1.
		r, size := utf8.DecodeRuneInString(s[i:])
		if b.Len()+utf8.RuneLen(r) > MaxTextBytes {
			b.WriteString(cutMark)
			break
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// String is attribute.String with its value made fit by Text.
func String(key, value string) attribute.KeyValue {
	return attribute.String(key, Text(value))
}

// RecordError marks span failed with err, as span.RecordError and
// span.SetStatus do, with err's text made fit by Text: an error may quote
// a request's bytes (a URL's query, a header value). The event is the
// SDK's own ("exception" with exception.type and exception.message,
// https://opentelemetry.io/docs/specs/semconv/exceptions/exceptions-spans/),
// written here because span.RecordError takes the message from err as it
// is. status is the span's status description; "" uses the message.
func RecordError(span trace.Span, err error, status string) {
	if span == nil || err == nil || !span.IsRecording() {
		return
	}
	msg := Text(err.Error())
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(typeName(err)), semconv.ExceptionMessage(msg)))
	if status == "" {
		status = msg
	}
	span.SetStatus(codes.Error, Text(status))
}

// typeName names err's type as the SDK's RecordError does (package path
// and name).
func typeName(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}
