package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestFrontSteps: the front's three steps against a stand-in relay and
// storage: what it asks the relay, what it sends storage, what it answers
// when either refuses, and what it leaves alone.
func TestFrontSteps(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	var stored []byte
	storageStatus := http.StatusOK
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "storage "+r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Amz-Checksum-Sha256"))
		if storageStatus == http.StatusOK {
			stored = b
		}
		w.WriteHeader(storageStatus)
	}))
	defer storage.Close()
	relayStatus := http.StatusOK
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "relay "+r.Method+" "+r.URL.Path+" len="+r.Header.Get("X-Content-Length")+" auth="+r.Header.Get("Authorization"))
		switch {
		case r.Method == http.MethodPost && relayStatus != http.StatusOK:
			w.Header().Set("X-Reason", "restricted: not a member")
			w.WriteHeader(relayStatus)
			_, _ = io.WriteString(w, `{"message":"restricted: not a member"}`)
		case r.Method == http.MethodPost:
			_ = json.NewEncoder(w).Encode(map[string]any{"url": storage.URL + "/uploads/c/u1", "upload_id": "u1",
				"headers": map[string]string{"X-Amz-Checksum-Sha256": "sum==", "Host": "elsewhere"}})
		case r.Method == http.MethodPut && r.ContentLength == 0:
			_, _ = io.WriteString(w, `{"url":"x","sha256":"ab","size":8,"type":"a/b","uploaded":1}`)
		default:
			w.WriteHeader(http.StatusCreated) // a small upload, through the API
		}
	})
	f := &Front{Next: relay, DirectMax: 4}
	put := func(body []byte, length int64) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPut, "/media/upload", bytes.NewReader(body))
		r.ContentLength = length
		r.Header.Set("Authorization", "Nostr x")
		r.Header.Set("X-SHA-256", "ab")
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w
	}
	reset := func() { calls, stored = nil, nil }

	// Above the direct limit: staged, stored, completed.
	w := put([]byte("12345678"), 8)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"sha256":"ab"`) || string(stored) != "12345678" {
		t.Fatalf("upload: %d %s, stored %q", w.Code, w.Body, stored)
	}
	if want := "relay POST /media/upload len=8 auth=Nostr x|storage PUT /uploads/c/u1 sum==|relay PUT /media/upload len= auth=Nostr x"; strings.Join(calls, "|") != want {
		t.Errorf("calls %q\nwant  %q", strings.Join(calls, "|"), want)
	}
	// Up to the limit, and other methods: to the API as they are.
	reset()
	if w := put([]byte("1234"), 4); w.Code != http.StatusCreated || len(calls) != 1 || !strings.HasPrefix(calls[0], "relay PUT") {
		t.Errorf("small upload: %d %v", w.Code, calls)
	}
	// No length: 411, nothing asked or stored.
	reset()
	if w := put([]byte("12345678"), -1); w.Code != http.StatusLengthRequired || len(calls) != 0 || !strings.HasPrefix(w.Header().Get("X-Reason"), "invalid:") {
		t.Errorf("chunked: %d %v", w.Code, calls)
	}
	// The relay refuses: its answer, storage untouched.
	reset()
	relayStatus = http.StatusForbidden
	if w := put([]byte("12345678"), 8); w.Code != http.StatusForbidden || w.Header().Get("X-Reason") != "restricted: not a member" || len(calls) != 1 {
		t.Errorf("refused: %d %v", w.Code, calls)
	}
	// Storage refuses the bytes: 409, never completed.
	reset()
	relayStatus, storageStatus = http.StatusOK, http.StatusBadRequest
	if w := put([]byte("12345678"), 8); w.Code != http.StatusConflict || len(calls) != 2 || !strings.HasPrefix(w.Header().Get("X-Reason"), "invalid:") {
		t.Errorf("storage refusal: %d %v", w.Code, calls)
	}
}
