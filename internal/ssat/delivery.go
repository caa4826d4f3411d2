package ssat

import "context"

// Delivery is what the builtin edge sent to the client for one response.
// The edge puts it in the request's context before calling the guest and
// fills it in once the last byte is out; the guest, which logs and counts
// the request, waits for that with AfterDelivery so that its access line
// and metrics report what reached the client, not what the guest wrote.
//
// One request's handlers run on one goroutine, so it needs no lock.
type Delivery struct {
	// Coding is the Content-Encoding the client received ("identity" for
	// none), whoever applied it.
	Coding string
	// Compressed says the edge applied Coding itself.
	Compressed bool
	// BytesIn counts the body bytes the guest wrote; BytesOut those sent
	// to the client.
	BytesIn, BytesOut int64
	// Err is why the response could not be delivered whole (a write or
	// flush to the client, or the end of the edge's encoder, failed). The
	// edge then aborts the response, so the client never sees a clean
	// end, and the guest records the request as aborted.
	Err error

	after []func()
}

type deliveryKey struct{}

// WithDelivery returns ctx carrying d.
func WithDelivery(ctx context.Context, d *Delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

// DeliveryOf returns the Delivery in ctx, or nil when no edge runs.
func DeliveryOf(ctx context.Context) *Delivery {
	d, _ := ctx.Value(deliveryKey{}).(*Delivery)
	return d
}

// AfterDelivery runs f once the edge has finished the response.
func (d *Delivery) AfterDelivery(f func()) { d.after = append(d.after, f) }

// Finish is called by the edge when the response is complete or aborted.
func (d *Delivery) Finish() {
	for _, f := range d.after {
		f()
	}
	d.after = nil
}
