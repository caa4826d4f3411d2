package store

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

var redisPrefixes atomic.Int64

func openTestRedis(url string) opener {
	return func(t *testing.T, c *clock) Store {
		t.Helper()
		// Each test has a namespace of its own: on a shared
		// SSATD_REDIS, tests never see each other's keys.
		prefix := fmt.Sprintf("ssatd-test-%d-%d:", os.Getpid(), redisPrefixes.Add(1))
		s, err := OpenRedis(RedisOptions{URL: url, Prefix: prefix, Now: c.Now, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx := context.Background()
			if keys, err := s.c.Keys(ctx, globEscape(prefix)+"*").Result(); err == nil && len(keys) > 0 {
				s.c.Del(ctx, keys...)
			}
			s.Close()
		})
		return s
	}
}

// TestRedisConformance runs the store suite on Redis.
func TestRedisConformance(t *testing.T) { runConformance(t, openTestRedis(testutil.RedisURL(t))) }

// TestRedisOutageFailsFastAndRecovers catches a Redis store that hangs
// the request when Redis is down, or fails other than with
// ErrUnavailable, or does not work again once Redis is back: the
// caller serves the page and degrades identity meanwhile.
func TestRedisOutageFailsFastAndRecovers(t *testing.T) {
	srv := testutil.StartRedis(t)
	s, err := OpenRedis(RedisOptions{URL: srv.URL, Prefix: "outage:"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSet(t, s, "ec:a", "v", nil, 0, Always)
	srv.Stop()
	// Each operation dials at most four times (a retried command, a
	// retried dial), each refused at once on loopback.
	checkUnavailable(t, s, 500*time.Millisecond)

	// Redis back on its address: the same store works again, without
	// being reopened.
	testutil.StartRedisOn(t, srv.Port)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping after Redis came back: %v", err)
	}
	if !mustSet(t, s, "ec:b", "v", nil, 0, IfAbsent) {
		t.Error("no write after Redis came back")
	}

	// Nothing listens: a Redis that was never up is unavailable too, not
	// an error at open.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	down, err := OpenRedis(RedisOptions{URL: "redis://" + addr})
	if err != nil {
		t.Fatalf("OpenRedis needs no server: %v", err)
	}
	defer down.Close()
	checkUnavailable(t, down, 500*time.Millisecond)
}

// TestRedisTimeoutBoundsASilentServer catches a store call that waits for
// ever on a Redis that accepts connections and never answers (a hung
// server, a black-holed network): the read timeout ends it.
func TestRedisTimeoutBoundsASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // read nothing, answer nothing
		}
	}()
	s, err := OpenRedis(RedisOptions{URL: "redis://" + l.Addr().String(), ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkUnavailable(t, s, 3*time.Second)
}
