// Package s3local is the local S3-compatible server of `make dev` and the
// tests: gofakes3 over a folder (one subfolder per bucket, one file per
// object), which the relay's real S3 client talks to with path-style
// addressing. localdev/s3 serves it as a command (localdev/s3.sh starts
// it); tests serve it in process on a free port (Start).
package s3local

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/spf13/afero"
)

// Handler serves the buckets kept under dir, creating the named ones.
func Handler(dir string, buckets ...string) (http.Handler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("s3local: %w", err)
	}
	fs := afero.NewBasePathFs(afero.NewOsFs(), dir)
	backend, err := s3afero.MultiBucket(fs)
	if err != nil {
		return nil, fmt.Errorf("s3local: %w", err)
	}
	for _, b := range buckets {
		if ok, err := backend.BucketExists(b); err != nil {
			return nil, fmt.Errorf("s3local: bucket %s: %w", b, err)
		} else if !ok {
			if err := backend.CreateBucket(b); err != nil {
				return nil, fmt.Errorf("s3local: create bucket %s: %w", b, err)
			}
		}
	}
	// Presigned URLs are checked by AWS, not here: the server takes any
	// signature. Browsers upload and download cross-origin (CORS).
	return gofakes3.New(prefixLister{Backend: backend, fs: fs}, gofakes3.WithoutVersioning(), gofakes3.WithInsecureCORS(),
		gofakes3.WithTimeSkewLimit(time.Hour)).Server(), nil
}

// Server is a running local S3 server.
type Server struct {
	URL string // http://127.0.0.1:port
	srv *http.Server
}

// Start serves dir's buckets on addr ("127.0.0.1:0": a free port).
func Start(addr, dir string, log *slog.Logger, buckets ...string) (*Server, error) {
	h, err := Handler(dir, buckets...)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3local: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && err != http.ErrServerClosed && log != nil {
			log.Warn("s3local: serve", "err", err)
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// ForTest serves a fresh local S3 server with buckets over a temporary
// folder for the test t, closed when t ends.
func ForTest(t testing.TB, buckets ...string) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", t.TempDir(), nil, buckets...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
