package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/buzzrelay/relay/shared/aws/scheduler"
)

// The Scheduler API in local form answers the runner's client as the
// Scheduler does (create, update, delete; 404 for a missing one), fires a
// one-time at() schedule once with its input and deletes it, and fires a
// rate() schedule every N minutes from its creation with the scheduled
// time in its input.
func TestSchedulerAPI(t *testing.T) {
	var mu sync.Mutex
	var got []string
	lambda := &LambdaAPI{Functions: map[string]AsyncHandler{
		WorkflowRunnerFunction: func(_ context.Context, payload json.RawMessage) error {
			mu.Lock()
			got = append(got, string(payload))
			mu.Unlock()
			return nil
		},
	}}
	api := &SchedulerAPI{Lambda: lambda}
	srv := httptest.NewServer(api.Wrap(http.NotFoundHandler()))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	c, err := scheduler.New(cfg, srv.URL, ScheduleGroup, SchedulerRoleArn, localFunctionArnBase+WorkflowRunnerFunction)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wid := "0e7f9a3c-1111-4222-8333-444455556666"
	if err := c.Put(ctx, "default", wid, "rate(15 minutes)"); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "default", wid, "rate(15 minutes)"); err != nil {
		t.Fatal("an update:", err)
	}
	if err := c.Wake(ctx, "default", "run-1", time.Now().Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := len(api.Schedules()); n != 2 {
		t.Fatalf("%d schedules, want 2", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(api.Schedules()) != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	lambda.Wait()
	sc := api.Schedules()
	if len(sc) != 1 || sc[0].Name != scheduler.Name("default", wid) || sc[0].Function != WorkflowRunnerFunction {
		t.Fatalf("schedules after the wake %+v", sc)
	}
	base := sc[0].Created.UTC().Truncate(time.Minute)
	for _, m := range []int{0, 7, 15, 16, 30} {
		if _, err := api.FireSchedules(ctx, base.Add(time.Duration(m)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	lambda.Wait()
	mu.Lock()
	sort.Strings(got[1:]) // the fires run concurrently
	want := []string{`{"community":"default","run":"run-1"}`,
		`{"community":"default","scheduled":"` + base.Add(15*time.Minute).Format(time.RFC3339) + `","workflow":"` + wid + `"}`,
		`{"community":"default","scheduled":"` + base.Add(30*time.Minute).Format(time.RFC3339) + `","workflow":"` + wid + `"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("invocations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Unlock()
	if err := c.Delete(ctx, "default", wid); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "default", wid); err != nil {
		t.Fatal("a second delete (404) is done:", err)
	}
	if n, _ := api.FireSchedules(ctx, base.Add(45*time.Minute)); n != 0 || len(api.Schedules()) != 0 {
		t.Errorf("a deleted schedule fired %d times", n)
	}
}
