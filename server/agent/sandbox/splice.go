package sandbox

import (
	"io"
	"net"
)

// splice copies a's input (read through ar, which may buffer some of it)
// to b and b's input to a, until both directions end, then closes both. The
// end of one direction's input is passed on as a half close, so that a
// client that signals the end of its request still gets the answer; an
// error in either direction closes both at once.
func splice(a net.Conn, ar io.Reader, b net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyThenClose(b, ar, a)
	}()
	copyThenClose(a, b, b)
	<-done
	a.Close()
	b.Close()
}

// copyThenClose copies src to dst, then half closes dst at the end of src,
// or closes both connections on an error.
func copyThenClose(dst net.Conn, src io.Reader, srcConn net.Conn) {
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		srcConn.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	dst.Close()
}
