package testutil

import "testing"

func TestLockedBufferNextIsClosedByTheNextWrite(t *testing.T) {
	var b LockedBuffer
	b.Write([]byte("a"))
	s, next := b.Next()
	if s != "a" {
		t.Fatalf("Next = %q, want a", s)
	}
	select {
	case <-next:
		t.Fatal("closed before any write")
	default:
	}
	if _, again := b.Next(); again != next {
		t.Fatal("a second Next before a write returned another channel")
	}
	b.Write([]byte("b"))
	select {
	case <-next:
	default:
		t.Fatal("not closed by the write")
	}
	if s, _ := b.Next(); s != "ab" {
		t.Fatalf("Next = %q, want ab", s)
	}
}
