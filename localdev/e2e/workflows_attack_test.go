package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/workflow"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// hookPost is POST /hooks/{id} with the secret in X-Webhook-Secret.
func hookPost(t *testing.T, r *Relay, id, secret, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/hooks/"+id, strings.NewReader(body))
	req.Header.Set("X-Webhook-Secret", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// A delay is a row and a one-time schedule, not a sleeping process: the
// run waits with its wake in the emulator's Scheduler (an at() schedule
// the runner created), the schedule fires and is deleted, and the run
// goes on and posts once.
func TestWorkflowDelayWakes(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	id, ok := saveWorkflow(t, b, alice, "", ch, "name: Remind\ntrigger:\n  on: webhook\nsteps:\n  - id: before\n    action: send_message\n    text: before\n  - id: wait\n    action: delay\n    duration: 3s\n  - id: after\n    action: send_message\n    text: after\n")
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	if st, out := hookPost(t, r, id, response(t, ok.Message)["webhook_secret"], `{}`); st != http.StatusAccepted {
		t.Fatalf("hook: %d %s", st, out)
	}
	runs := waitRuns(t, r, alice, id, func(rs []workflow.RunWire) bool { return len(rs) == 1 && rs[0].Status == "waiting" })
	wakes := 0
	for _, sc := range r.Stack.Scheduler.Schedules() {
		if strings.HasPrefix(sc.Name, "wk-"+runs[0].ID+"-") && strings.HasPrefix(sc.Expression, "at(") {
			wakes++
		}
	}
	if wakes != 1 {
		t.Fatalf("%d wake schedules for the waiting run, want 1: %+v", wakes, r.Stack.Scheduler.Schedules())
	}
	runs = waitRuns(t, r, alice, id, allDone(1))
	if runs[0].Status != "completed" || len(runs[0].ExecutionTrace) != 3 {
		t.Fatalf("run %+v", runs[0])
	}
	var texts []string
	for _, p := range workflowPosts(t, b, ch, 9) {
		texts = append(texts, p.Content)
	}
	if strings.Join(texts, ",") != "after,before" && strings.Join(texts, ",") != "before,after" {
		t.Fatalf("posts %v, want before and after once each", texts)
	}
	for _, sc := range r.Stack.Scheduler.Schedules() {
		if strings.HasPrefix(sc.Name, "wk-"+runs[0].ID) {
			t.Errorf("the fired wake is still scheduled: %+v", sc)
		}
	}
}

// Attacks on the workflow doors, beside those in workflows_test.go (a
// stranger's definition, 46020 and runs read; a forged secret; another
// community's secret and runs; a workflow that triggers itself; a
// private call_webhook): 30 forged secrets at once run nothing; two
// workflows that would answer each other run once each; a stranger's
// 46030 on a pending approval is refused and the run keeps waiting;
// 46020 on another community's host naming this community's workflow id
// finds no workflow; 30 webhook calls at once are 30 runs, each posting
// once.
func TestWorkflowAttacks(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)

	id, ok := saveWorkflow(t, b, alice, "", ch, "name: Hook\ntrigger:\n  on: webhook\nsteps:\n  - id: say\n    action: send_message\n    text: 'hook {{trigger.n}}'\n")
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	secret := response(t, ok.Message)["webhook_secret"]
	var wg sync.WaitGroup
	codes := make([]int, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = hookPost(t, r, id, uuid.NewString(), `{"n":"x"}`)
		}()
	}
	wg.Wait()
	for i, st := range codes {
		if st != http.StatusUnauthorized {
			t.Errorf("forged secret %d: %d, want 401", i, st)
		}
	}
	if n := len(runsOf(t, r, alice, id).Runs); n != 0 {
		t.Fatalf("%d runs from forged secrets", n)
	}
	// 30 genuine calls at once: 30 runs, one post each.
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = hookPost(t, r, id, secret, fmt.Sprintf(`{"n":"%d"}`, i))
		}()
	}
	wg.Wait()
	for i, st := range codes {
		if st != http.StatusAccepted {
			t.Errorf("call %d: %d, want 202", i, st)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, out := getAs(t, r, alice, "/workflows/"+id+"/runs?limit=100")
		var p workflow.RunsPage
		if st != http.StatusOK || json.Unmarshal(out, &p) != nil {
			t.Fatalf("runs: %d %s", st, out)
		}
		if allDone(30)(p.Runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs never 30 done: %v", statuses(p.Runs))
		}
		time.Sleep(200 * time.Millisecond)
	}
	posts := workflowPosts(t, b, ch, 9)
	seen := map[string]int{}
	for _, p := range posts {
		seen[p.Content]++
	}
	if len(posts) != 30 || len(seen) != 30 {
		t.Fatalf("%d posts (%d distinct), want 30 distinct", len(posts), len(seen))
	}

	// Two workflows that would answer each other's posts: each runs once
	// for the member's message, and neither for the other's post.
	ping, pok := saveWorkflow(t, b, alice, "", ch, "name: Ping\ntrigger:\n  on: message_posted\n  filter: 'str_contains(trigger_text, \"pong\")'\nsteps:\n  - id: s\n    action: send_message\n    text: ping\n")
	pong, qok := saveWorkflow(t, b, alice, "", ch, "name: Pong\ntrigger:\n  on: message_posted\n  filter: 'str_contains(trigger_text, \"ping\")'\nsteps:\n  - id: s\n    action: send_message\n    text: pong\n")
	if !pok.Accepted || !qok.Accepted {
		t.Fatalf("saves: %+v %+v", pok, qok)
	}
	publish(t, arl, alice, 9, nostr.Tags{{"h", ch}}, "ping pong")
	waitRuns(t, r, alice, ping, allDone(1))
	waitRuns(t, r, alice, pong, allDone(1))
	time.Sleep(2 * time.Second)
	if a, c := len(runsOf(t, r, alice, ping).Runs), len(runsOf(t, r, alice, pong).Runs); a != 1 || c != 1 {
		t.Fatalf("ping ran %d times, pong %d: want once each", a, c)
	}

	// A stranger decides alice's approval: refused, the run still waits.
	appr, aok := saveWorkflow(t, b, alice, "", ch, "name: Gate\ntrigger:\n  on: webhook\nsteps:\n  - id: ask\n    action: request_approval\n    from: any\n    message: ok?\n    timeout: 1h\n  - id: s\n    action: send_message\n    text: approved\n")
	if !aok.Accepted {
		t.Fatal(aok.Message)
	}
	if st, out := hookPost(t, r, appr, response(t, aok.Message)["webhook_secret"], `{}`); st != http.StatusAccepted {
		t.Fatalf("hook: %d %s", st, out)
	}
	runs := waitRuns(t, r, alice, appr, func(rs []workflow.RunWire) bool { return len(rs) == 1 && rs[0].Status == "waiting_approval" })
	reqs := b.query(map[string]any{"kinds": []int{46010}, "#h": []string{ch}})
	if len(reqs) != 1 {
		t.Fatalf("46010 %+v", reqs)
	}
	ref := reqs[0].Tags.GetFirst([]string{"d", ""})
	mallory := testkit.NewKey(t)
	if refused := newBridge(t, r, mallory).submit(signed(t, mallory, 46030, nostr.Tags{{"d", (*ref)[1]}}, "yes")); refused.Accepted {
		t.Fatalf("a stranger's 46030: %+v", refused)
	}
	time.Sleep(time.Second)
	if got := runsOf(t, r, alice, appr).Runs; len(got) != 1 || got[0].Status != "waiting_approval" || got[0].ID != runs[0].ID {
		t.Fatalf("after a stranger's decision: %+v", got)
	}

	// Another community's host: alice's workflow id names nothing there.
	ctx := ctxT(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "wasps", Hosts: []string{"w.test"}, Name: "Wasps"}); err != nil {
		t.Fatal(err)
	}
	r.ForgetCommunities()
	other := onHost(t, r, "w.test")
	if got := other.submit(alice, signed(t, alice, 46020, nostr.Tags{{"d", id}}, "")); got.Accepted || got.Message != "invalid: workflow not found" {
		t.Fatalf("46020 of another community's workflow: %+v", got)
	}
	if st, _ := other.do(nil, http.MethodPost, "/hooks/"+id+"?secret="+secret, "", "", nil); st != http.StatusNotFound {
		t.Fatalf("the right secret on another community's host: %d, want 404", st)
	}
	if st, out := onHost(t, r, "a.test").do(&alice, http.MethodGet, "/workflows/"+id+"/runs?limit=100", "", "", nil); st != http.StatusOK || strings.Count(string(out), `"workflow_id"`) != 30 {
		t.Fatalf("runs after the other host's calls: %d, %d runs, want the 30 genuine ones", st, strings.Count(string(out), `"workflow_id"`))
	}
}
