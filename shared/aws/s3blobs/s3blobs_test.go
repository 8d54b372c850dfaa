package s3blobs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
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
	sum := sha256.Sum256(body)
	u, hdr, err := b.PresignPut(ctx, "uploads/c/1", int64(len(body)), "image/png", hex.EncodeToString(sum[:]), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The checksum is signed into the URL: S3 refuses other bytes.
	if got := hdr.Get("X-Amz-Checksum-Sha256"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("signed headers %v: no x-amz-checksum-sha256 of the body", hdr)
	}
	if q, _ := url.Parse(u); !strings.Contains(q.Query().Get("X-Amz-SignedHeaders"), "x-amz-checksum-sha256") {
		t.Fatalf("the checksum is not among the signed headers: %s", u)
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
	g, err := b.PresignGet(ctx, "uploads/c/1", "image/png", "", time.Minute)
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

// TestCopyOfTheVersionThatWasRead: a copy conditioned on the ETag a read
// returned copies that object, and is refused (copied false) once the
// source was replaced, by S3 and by the local server alike.
func TestCopyOfTheVersionThatWasRead(t *testing.T) {
	ctx := context.Background()
	b := local(t)
	if err := b.Put(ctx, "uploads/c/1", []byte("first"), ""); err != nil {
		t.Fatal(err)
	}
	r, etag, err := b.OpenVersion(ctx, "uploads/c/1")
	if err != nil || etag == "" {
		t.Fatalf("open: %q %v", etag, err)
	}
	r.Close()
	if copied, err := b.CopyVersion(ctx, "uploads/c/1", "blobs/c/1", "", etag); err != nil || !copied {
		t.Fatalf("copy of the version read: %v %v", copied, err)
	}
	if err := b.Put(ctx, "uploads/c/1", []byte("second"), ""); err != nil {
		t.Fatal(err)
	}
	if copied, err := b.CopyVersion(ctx, "uploads/c/1", "blobs/c/2", "", etag); err != nil || copied {
		t.Fatalf("copy of a replaced source: copied %v, %v", copied, err)
	}
	if _, found, _ := b.Head(ctx, "blobs/c/2"); found {
		t.Fatal("a refused copy wrote its destination")
	}
}

// TestGetIfNoneMatch: a read naming the ETag it has is answered "unchanged"
// without a body until the object changes, then with the new one; a
// missing object is not found.
func TestGetIfNoneMatch(t *testing.T) {
	ctx := context.Background()
	b := local(t)
	if _, _, _, found, err := b.GetIfNoneMatch(ctx, "doc", ""); err != nil || found {
		t.Fatalf("missing: found %v, %v", found, err)
	}
	if err := b.Put(ctx, "doc", []byte("one"), "application/json"); err != nil {
		t.Fatal(err)
	}
	body, etag, changed, found, err := b.GetIfNoneMatch(ctx, "doc", "")
	if err != nil || !found || !changed || string(body) != "one" || etag == "" {
		t.Fatalf("first read: %q %q %v %v %v", body, etag, changed, found, err)
	}
	if body, _, changed, found, err := b.GetIfNoneMatch(ctx, "doc", etag); err != nil || !found || changed || body != nil {
		t.Fatalf("unchanged: %q %v %v %v", body, changed, found, err)
	}
	if err := b.Put(ctx, "doc", []byte("two"), "application/json"); err != nil {
		t.Fatal(err)
	}
	if body, etag2, changed, _, err := b.GetIfNoneMatch(ctx, "doc", etag); err != nil || !changed || string(body) != "two" || etag2 == etag {
		t.Fatalf("changed: %q %q %v %v", body, etag2, changed, err)
	}
}
