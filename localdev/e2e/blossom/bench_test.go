package blossom_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Throughput of the media routes on this machine, beside a plain S3
// put/get of the same blob against the same local S3 server in the same
// run:
//
//	go test -run '^$' -bench . -benchtime 20x ./localdev/e2e/blossom/
//
// MB/s is b.SetBytes's; ttfb-ms the time to the first byte of a 1 MB
// download (GET /<sha256>, its redirect, S3's answer).

type benchRelay struct {
	r      *e2e.Relay
	key    testkit.Key
	bucket *s3blobs.Bucket
}

func startBench(b *testing.B) *benchRelay {
	b.Helper()
	env := map[string]string{"MEDIA_KEY_BYTES_PER_DAY": "0", "MEDIA_COMMUNITY_BYTES_STORED": "0"}
	r := e2e.StartTest(b, e2e.Options{Media: true, Env: env})
	k := testkit.NewKey(b)
	join(b, r, k)
	bk, err := s3blobs.Open(context.Background(), "", e2e.MediaBucket, r.S3URL)
	if err != nil {
		b.Fatal(err)
	}
	return &benchRelay{r: r, key: k, bucket: bk}
}

func randomBlob(b *testing.B, n int) ([]byte, string) {
	b.Helper()
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		b.Fatal(err)
	}
	return buf, media.Hash(buf)
}

// auth is a kind 24242 upload authorization header for hash.
func (br *benchRelay) auth(b testing.TB, verb, hash string) string {
	ev := &nostr.Event{Kind: blossom.AuthKind, CreatedAt: nostr.Now(), Content: "bench",
		Tags: nostr.Tags{{"t", verb}, {"x", hash}, {"expiration", strconv.FormatInt(time.Now().Unix()+600, 10)}}}
	if err := br.key.Sign(ev); err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(ev)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

func (br *benchRelay) upload(b testing.TB, body []byte, hash string) {
	req, _ := http.NewRequest(http.MethodPut, br.r.HTTPURL+"/upload", bytes.NewReader(body))
	req.Header.Set("X-SHA-256", hash)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", br.auth(b, "upload", hash))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("upload: %d %s", resp.StatusCode, resp.Header.Get("X-Reason"))
	}
}

// BenchmarkUpload1MB: PUT /upload of a new 1 MB blob through the emulated
// gateway and function (verification, S3 put, Postgres rows).
func BenchmarkUpload1MB(b *testing.B) {
	br := startBench(b)
	b.SetBytes(1 << 20)
	for b.Loop() {
		b.StopTimer()
		body, h := randomBlob(b, 1<<20)
		b.StartTimer()
		br.upload(b, body, h)
	}
}

// BenchmarkS3Put1MB: the same blob put straight into the local S3 server.
func BenchmarkS3Put1MB(b *testing.B) {
	br := startBench(b)
	b.SetBytes(1 << 20)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		body, h := randomBlob(b, 1<<20)
		b.StartTimer()
		if err := br.bucket.Put(ctx, "bench/"+h, body, "application/octet-stream"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUploadPresigned16MB: POST /media/upload, the presigned S3 PUT,
// and the completion (the relay streams the object back, checks its
// SHA-256, copies it under blobs/) on HEAD /<sha256>.
func BenchmarkUploadPresigned16MB(b *testing.B) {
	br := startBench(b)
	const n = 16 << 20
	b.SetBytes(n)
	for b.Loop() {
		b.StopTimer()
		body, h := randomBlob(b, n)
		b.StartTimer()
		req, _ := http.NewRequest(http.MethodPost, br.r.HTTPURL+"/media/upload", nil)
		req.Header.Set("X-SHA-256", h)
		req.Header.Set("X-Content-Length", strconv.Itoa(n))
		req.Header.Set("Authorization", br.auth(b, "upload", h))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var p struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		put, _ := http.NewRequest(http.MethodPut, p.URL, bytes.NewReader(body))
		for k, v := range p.Headers {
			put.Header.Set(k, v)
		}
		if resp, err = http.DefaultClient.Do(put); err != nil || resp.StatusCode != 200 {
			b.Fatalf("presigned put: %v %v", err, resp)
		}
		resp.Body.Close()
		if resp, err = http.Head(br.r.HTTPURL + "/" + h); err != nil || resp.StatusCode != 200 {
			b.Fatalf("complete: %v %v", err, resp)
		}
		resp.Body.Close()
	}
}

// BenchmarkDownload1MB: GET /<sha256> (the redirect, then S3's bytes),
// with the time to the first byte.
func BenchmarkDownload1MB(b *testing.B) {
	br := startBench(b)
	body, h := randomBlob(b, 1<<20)
	br.upload(b, body, h)
	download(b, br.r.HTTPURL+"/"+h, len(body))
}

// BenchmarkS3Get1MB: the same blob got straight from the local S3 server
// (a presigned GET, no relay), with the time to the first byte.
func BenchmarkS3Get1MB(b *testing.B) {
	br := startBench(b)
	body, h := randomBlob(b, 1<<20)
	ctx := context.Background()
	if err := br.bucket.Put(ctx, "bench/"+h, body, "application/octet-stream"); err != nil {
		b.Fatal(err)
	}
	url, err := br.bucket.PresignGet(ctx, "bench/"+h, "", "", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	download(b, url, len(body))
}

func download(b *testing.B, url string, n int) {
	b.Helper()
	b.SetBytes(int64(n))
	var ttfb time.Duration
	for b.Loop() {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
			b.Fatal(err)
		}
		ttfb += time.Since(start)
		got, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || int(got)+1 != n {
			b.Fatalf("download: %d, %d bytes", resp.StatusCode, got+1)
		}
	}
	b.ReportMetric(float64(ttfb.Microseconds())/1000/float64(b.N), "ttfb-ms")
}
