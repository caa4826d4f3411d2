package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
)

// BenchmarkPageTracing serves one eligible 64 KiB page through the
// daemon's handler with tracing off, and on with every trace sampled and
// exported to an in-process receiver that discards it.
func BenchmarkPageTracing(b *testing.B) {
	page := "<!doctype html><html><head><title>t</title></head><body>" +
		strings.Repeat(`<p><a href="/a">link</a> some text of the page</p>`, 1300) + "</body></html>"
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	defer origin.Close()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			tracing := ""
			if on {
				tracing = fmt.Sprintf("[tracing]\nendpoint = %q\n", sink.URL)
			}
			cfg, err := config.Load(writeConfig(b, reloadConfig(origin.URL, "/1/b", "")+tracing), nil)
			if err != nil {
				b.Fatal(err)
			}
			d, err := newDaemon(cfg, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			tr, err := startTracing(context.Background(), &cfg.Tracing, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				d.stopTracing()
				otel.SetTracerProvider(noop.NewTracerProvider())
				otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
				otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) // the handler logged to this test
			}()
			d.useTracing(tr)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "http://localhost/page", nil)
				req.Header.Set("Accept", "text/html")
				w := httptest.NewRecorder()
				d.client.Handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
