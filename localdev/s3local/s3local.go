// Package s3local is the local S3-compatible server of `make dev` and the
// tests: gofakes3 over a folder (one subfolder per bucket, one file per
// object), which the relay's real S3 client talks to with path-style
// addressing. localdev/s3 serves it as a command (localdev/s3.sh starts
// it); tests serve it in process on a free port (Start).
package s3local

import (
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
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
	// signature and any x-amz-checksum-sha256 (the relay hashes what it
	// completes). Browsers upload and download cross-origin (CORS).
	s3 := gofakes3.New(prefixLister{Backend: backend, fs: fs}, gofakes3.WithoutVersioning(), gofakes3.WithInsecureCORS(),
		gofakes3.WithTimeSkewLimit(time.Hour)).Server()
	return copyIfMatch(backend, s3), nil
}

// copyIfMatch adds what gofakes3 leaves out of CopyObject: the
// x-amz-copy-source-if-match condition, answered 412 PreconditionFailed
// when the source's ETag is not the one named, as S3 does. (The check and
// the copy are two steps here, atomic in S3; the relay's completion reads
// an object, then copies it on this condition.)
func copyIfMatch(backend gofakes3.Backend, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := r.Header.Get("X-Amz-Copy-Source-If-Match")
		src := r.Header.Get("X-Amz-Copy-Source")
		if r.Method != http.MethodPut || want == "" || src == "" {
			next.ServeHTTP(w, r)
			return
		}
		if s, err := url.PathUnescape(src); err == nil {
			src = s
		}
		bucket, key, _ := strings.Cut(strings.TrimPrefix(src, "/"), "/")
		key, _, _ = strings.Cut(key, "?")
		obj, err := backend.HeadObject(bucket, key)
		if err != nil || strings.Trim(want, `"`) == hex.EncodeToString(obj.Hash) {
			next.ServeHTTP(w, r) // the copy, or gofakes3's answer to a missing source
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusPreconditionFailed)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`)
	})
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
