package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"time"

	"github.com/buzzrelay/relay/shared/domain/front"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/transport/bridge"
)

// Front is the local stand-in for the CloudFront distribution in front of
// the relay (infra/front.go): it takes Buzz desktop's one large upload, a
// PUT /media/upload of the whole file with its 24242 authorization
// (block/buzz desktop/src-tauri/src/commands/media.rs do_upload), which
// API Gateway (10 MB) and Lambda (6 MB) cannot carry, and sends its bytes
// to the media bucket without a function in between, in the same three
// steps the distribution's edge function takes (infra/edgeupload.js):
//
//  1. POST /media/upload to the relay with the caller's Authorization,
//     X-SHA-256, X-Content-Length (its Content-Length) and X-Content-Type:
//     the relay's own code checks the 24242 event (upload verb, x tag,
//     server tag, expiration), the key's standing in the community, the
//     size against max_blob_bytes and the quotas, and answers a presigned
//     S3 PUT of the staging key bound to that size and SHA-256 (any
//     refusal goes back to the caller as the relay gave it, before a byte
//     of the body is read);
//  2. the body, streamed as it arrives (never held whole), PUT to that URL
//     with its signed headers (S3 refuses another size or another SHA-256;
//     the local S3 does not, step 3 does);
//  3. PUT /media/upload with an empty body and the same Authorization and
//     X-SHA-256: the relay hashes the staged object, copies it under
//     blobs/ and answers the blob descriptor the app parses (or 409 when
//     the bytes are not the announced ones, which are then deleted).
//
// It also streams Buzz desktop's feedback attachments from the bucket
// (stream, below). Bodies up to the direct limit, and every other request,
// go to the APIs unchanged. A PUT without a Content-Length (Transfer-Encoding: chunked)
// is answered 411: S3 takes no chunked PUT and the presigned URL
// is bound to a size. Buzz's app always sends one: do_upload sets
// Content-Length itself before wrapping its stream.
type Front struct {
	Next http.Handler
	// DirectMax is the largest body that goes through a function
	// (MEDIA_DIRECT_MAX_BYTES).
	DirectMax int64
	// Client sends the bytes to the bucket.
	Client *http.Client
}

// UploadPath is the route the front takes large uploads on.
const UploadPath = "/media/upload"

// ServeHTTP routes one request.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		if ok, _ := path.Match(front.StreamPattern, r.URL.Path); ok {
			f.stream(w, r)
			return
		}
	}
	if r.Method != http.MethodPut || r.URL.Path != UploadPath || (r.ContentLength >= 0 && r.ContentLength <= f.DirectMax) {
		f.Next.ServeHTTP(w, r)
		return
	}
	if r.ContentLength < 0 {
		refuse(w, http.StatusLengthRequired, reject.Invalidf("an upload above %d bytes needs a Content-Length header "+
			"(it goes to storage as one PUT of that many bytes; chunked transfer encoding is not taken)", f.DirectMax))
		return
	}
	f.upload(w, r)
}

// upload is the three steps above.
func (f *Front) upload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	stage := f.relay(ctx, r, http.MethodPost, map[string]string{
		"X-Content-Length": strconv.FormatInt(r.ContentLength, 10),
		"X-Content-Type":   r.Header.Get("Content-Type"),
	})
	if stage.Code != http.StatusOK {
		relayAnswer(w, stage)
		return
	}
	var p struct {
		URL      string            `json:"url"`
		Headers  map[string]string `json:"headers"`
		UploadID string            `json:"upload_id"`
	}
	if err := json.Unmarshal(stage.Body.Bytes(), &p); err != nil || p.UploadID == "" || p.URL == "" {
		// The key already owns this blob: the relay answered its
		// descriptor, and the body is not needed.
		relayAnswer(w, stage)
		return
	}
	put, err := http.NewRequestWithContext(ctx, http.MethodPut, p.URL, r.Body)
	if err != nil {
		refuse(w, http.StatusBadGateway, reject.New(reject.Internal, "the storage URL could not be used"))
		return
	}
	put.ContentLength = r.ContentLength
	for k, v := range p.Headers {
		if http.CanonicalHeaderKey(k) != "Host" {
			put.Header.Set(k, v)
		}
	}
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: time.Hour}
	}
	resp, err := client.Do(put)
	if err != nil {
		refuse(w, http.StatusBadRequest, reject.Invalidf("the upload ended before its %d bytes arrived", r.ContentLength))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// S3 refuses bytes that are not the announced size or SHA-256
		// (400 BadDigest and the like): the caller's body was wrong.
		refuse(w, http.StatusConflict, reject.Invalidf("storage refused the body (%d): it is not %d bytes hashing to the announced X-SHA-256",
			resp.StatusCode, r.ContentLength))
		return
	}
	relayAnswer(w, f.relay(ctx, r, http.MethodPut, nil))
}

// relay runs method /media/upload on the relay with r's Host,
// Authorization and X-SHA-256 (and extra headers), without a body.
func (f *Front) relay(ctx context.Context, r *http.Request, method string, extra map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, method, UploadPath, http.NoBody)
	req.Host, req.RemoteAddr = r.Host, r.RemoteAddr
	req.URL.Scheme, req.URL.Host = "http", r.Host
	for _, h := range []string{"Authorization", "X-Sha-256", "X-Forwarded-For", "X-Forwarded-Proto", "Origin"} {
		if v := r.Header.Values(h); len(v) > 0 {
			req.Header[h] = v
		}
	}
	for k, v := range extra {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	req.ContentLength = 0
	rec := httptest.NewRecorder()
	f.Next.ServeHTTP(rec, req)
	return rec
}

// relayAnswer writes the relay's answer back to the caller.
func relayAnswer(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// refuse answers as the media routes do: the reason in X-Reason and in a
// JSON {"message"}.
func refuse(w http.ResponseWriter, status int, rej *reject.Error) {
	reason := rej.Error()
	body, _ := json.Marshal(map[string]string{"message": reason})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Reason", reason)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(body))
}

// stream is a GET the relay may answer with a bridge.Stream (its
// front.StreamPattern: Buzz desktop's feedback attachments): the request goes
// to the relay unchanged; a Stream answer is then GET from the bucket
// (the client's Range forwarded) and streamed to the client on this same
// request, with the relay's headers, the Stream's and the bucket's
// Content-Length and Content-Range; any other answer is the relay's. The
// bytes never pass through a function, and the client sees no redirect
// (the app's admin client follows none). The same steps run in
// CloudFront's edge function (infra/edgeupload.js).
func (f *Front) stream(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	f.Next.ServeHTTP(rec, r)
	if rec.Header().Get(front.StreamHeader) == "" {
		relayAnswer(w, rec)
		return
	}
	var s bridge.Stream
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.URL == "" {
		refuse(w, http.StatusBadGateway, reject.New(reject.Internal, "the relay's stream answer could not be read"))
		return
	}
	get, err := http.NewRequestWithContext(r.Context(), http.MethodGet, s.URL, nil)
	if err != nil {
		refuse(w, http.StatusBadGateway, reject.New(reject.Internal, "the storage URL could not be used"))
		return
	}
	if v := r.Header.Get("Range"); v != "" {
		get.Header.Set("Range", v)
	}
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: time.Hour}
	}
	resp, err := client.Do(get)
	if err != nil {
		refuse(w, http.StatusBadGateway, reject.New(reject.Internal, "storage did not answer"))
		return
	}
	defer resp.Body.Close()
	for k, v := range rec.Header() {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Type", "Content-Length", http.CanonicalHeaderKey(front.StreamHeader):
		default:
			w.Header()[k] = v
		}
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable:
	case http.StatusNotFound:
		// The blob left the bucket since the relay looked: the route's
		// own answer for a blob it does not hold.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, s.Missing)
		return
	default:
		refuse(w, http.StatusBadGateway, reject.New(reject.Internal, "storage did not serve the blob"))
		return
	}
	for k, v := range s.Headers {
		w.Header().Set(k, v)
	}
	for _, h := range []string{"Content-Length", "Content-Range"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
