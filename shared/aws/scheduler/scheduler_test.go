package scheduler

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// TestRequests: Put updates, and creates on 404; Delete names the group
// and takes 404 as done; Wake is a one-time at() schedule deleted after it
// fires; every request is SigV4-signed for "scheduler".
func TestRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	exists := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(r.Header.Get("Authorization"), "/scheduler/aws4_request") {
			t.Errorf("unsigned request %s %s", r.Method, r.URL)
		}
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+string(b))
		switch r.Method {
		case http.MethodPut:
			if !exists[r.URL.Path] {
				w.WriteHeader(http.StatusNotFound)
				return
			}
		case http.MethodPost:
			exists[r.URL.Path] = true
		case http.MethodDelete:
			if !exists[r.URL.Path] {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			delete(exists, r.URL.Path)
		}
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	c, err := New(cfg, srv.URL, "buzz-workflows", "arn:aws:iam::1:role/r", "arn:aws:lambda:us-east-1:1:function:workflow-runner")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wid := "0e7f9a3c-1111-4222-8333-444455556666"
	if err := c.Put(ctx, "default", wid, "rate(15 minutes)"); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "default", wid, "cron(0 9 ? * 2-6 *)"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "default", wid); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "default", wid); err != nil {
		t.Fatal("a second delete:", err)
	}
	if err := c.Wake(ctx, "default", "run-1", time.Unix(1800000000, 0)); err != nil {
		t.Fatal(err)
	}
	name := Name("default", wid)
	want := []string{"PUT /schedules/" + name, "POST /schedules/" + name, "PUT /schedules/" + name, "DELETE /schedules/" + name + "?groupName=buzz-workflows", "DELETE /schedules/" + name, "PUT /schedules/wk-run-1-1800000000", "POST /schedules/wk-run-1-1800000000"}
	if len(seen) != len(want) {
		t.Fatalf("requests:\n%s", strings.Join(seen, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(seen[i], w) {
			t.Errorf("request %d = %s, want %s…", i, seen[i], w)
		}
	}
	var s schedule
	body := seen[len(seen)-1][strings.Index(seen[len(seen)-1], "{"):]
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	if s.ScheduleExpression != "at(2027-01-15T08:00:00)" || s.ActionAfterCompletion != "DELETE" || s.GroupName != "buzz-workflows" ||
		s.Target.Input != `{"community":"default","run":"run-1"}` || s.FlexibleTimeWindow["Mode"] != "OFF" {
		t.Errorf("wake schedule %+v", s)
	}
	var fire schedule
	if err := json.Unmarshal([]byte(seen[0][strings.Index(seen[0], "{"):]), &fire); err != nil {
		t.Fatal(err)
	}
	if fire.Target.Input != `{"community":"default","scheduled":"<aws.scheduler.scheduled-time>","workflow":"`+wid+`"}` {
		t.Errorf("a schedule's input %s: no scheduled time for the runner's run key", fire.Target.Input)
	}
	if len(name) > 64 {
		t.Errorf("schedule name %q is longer than 64", name)
	}
}
