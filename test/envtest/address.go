package envtest

import (
	"net"
	"testing"
)

// FreeAddress returns a loopback address (127.0.0.1:port) nothing listened
// on a moment ago, for a server a test starts.
func FreeAddress(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
