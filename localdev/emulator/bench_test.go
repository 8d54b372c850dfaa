package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkEventsHTTP is POST /events end to end on one machine: HTTP,
// the emulator's API Gateway event, the adapter, NIP-98 (signature and the
// replay row), then the same ingest as BenchmarkIngest. 16 concurrent
// clients; events and tokens are signed before the timer starts.
//
//	go test -run '^$' -bench EventsHTTP -benchtime 3000x ./localdev/emulator/
func BenchmarkEventsHTTP(b *testing.B) {
	srv, _ := newEventsServer(b, 16, map[string]bool{"POST /events": true})
	defer srv.Close()

	owner := testkit.NewKey(b)
	ch := testkit.ChannelID()
	create, _ := json.Marshal(owner.Event(b, 9007, "", nostr.Tag{"h", ch}, nostr.Tag{"name", "bench"}))
	post(b, srv.URL, owner, create)

	type req struct {
		body []byte
		auth string
	}
	reqs := make(chan req, b.N)
	authors := make([]testkit.Key, 32)
	for i := range authors {
		authors[i] = testkit.NewKey(b)
	}
	now := time.Now()
	for i := 0; i < b.N; i++ {
		k := authors[i%len(authors)]
		body, _ := json.Marshal(k.EventAt(b, now, 9, fmt.Sprint("message ", i), nostr.Tag{"h", ch}))
		reqs <- req{body, k.Token(b, "POST", srv.URL+"/events", body, now)}
	}
	close(reqs)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := <-reqs
			hr, _ := http.NewRequest(http.MethodPost, srv.URL+"/events", bytes.NewReader(r.body))
			hr.Header.Set("Authorization", r.auth)
			resp, err := client.Do(hr)
			if err != nil {
				b.Error(err)
				continue
			}
			var out struct {
				Accepted bool   `json:"accepted"`
				Message  string `json:"message"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if resp.StatusCode != 200 || !out.Accepted {
				b.Errorf("status %d: %+v", resp.StatusCode, out)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func post(b *testing.B, base string, k testkit.Key, body []byte) {
	b.Helper()
	hr, _ := http.NewRequest(http.MethodPost, base+"/events", bytes.NewReader(body))
	hr.Header.Set("Authorization", k.Token(b, "POST", base+"/events", body, time.Now()))
	resp, err := http.DefaultClient.Do(hr)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("setup post: %v %v", resp, err)
	}
	resp.Body.Close()
}
