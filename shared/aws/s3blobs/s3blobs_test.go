package s3blobs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
)

// local serves a fresh local S3 server and opens its bucket.
func local(t *testing.T) *s3blobs.Bucket {
	t.Helper()
	srv := s3local.ForTest(t, "media")
	b, err := s3blobs.Open(context.Background(), "", "media", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBucket(t *testing.T) {
	ctx := context.Background()
	b := local(t)
	body := []byte("0123456789abcdef")
	if err := b.Put(ctx, "blobs/c/x", body, "text/plain"); err != nil {
		t.Fatal(err)
	}
	if n, found, err := b.Head(ctx, "blobs/c/x"); err != nil || !found || n != int64(len(body)) {
		t.Fatalf("head: %d %v %v", n, found, err)
	}
	if _, found, err := b.Head(ctx, "blobs/c/none"); err != nil || found {
		t.Fatalf("head of nothing: %v %v", found, err)
	}
	if _, err := b.Open(ctx, "blobs/c/none", 0, 0); !errors.Is(err, s3blobs.ErrNotFound) {
		t.Fatalf("open of nothing: %v", err)
	}
	r, err := b.Open(ctx, "blobs/c/x", 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "456" {
		t.Fatalf("range read %q", got)
	}
	if err := b.Copy(ctx, "blobs/c/x", "trash/c/x", "text/plain"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "blobs/c/x"); err != nil {
		t.Fatal(err)
	}
	if _, found, err := b.Head(ctx, "blobs/c/x"); err != nil || found {
		t.Fatalf("deleted object: %v %v", found, err)
	}
	if n, found, err := b.Head(ctx, "trash/c/x"); err != nil || !found || n != 16 {
		t.Fatalf("copy: %d %v", n, err)
	}
}

func TestPresigned(t *testing.T) {
	ctx := context.Background()
	b := local(t)
	body := bytes.Repeat([]byte("blob"), 1000)
	u, hdr, err := b.PresignPut(ctx, "uploads/c/1", int64(len(body)), "image/png", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	for k, v := range hdr {
		if k != "Host" {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned put: %d", resp.StatusCode)
	}
	g, err := b.PresignGet(ctx, "uploads/c/1", "image/png", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, g, nil)
	req.Header.Set("Range", "bytes=4-7")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(got) != "blob" || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("presigned ranged get: %d %q %q", resp.StatusCode, got, resp.Header.Get("Content-Type"))
	}
}
