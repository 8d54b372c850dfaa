package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/workflow"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Buzz's workflows driven as the desktop app drives them
// (desktop/src-tauri/src/commands/workflows.rs): a kind 30620 with d (a
// UUID) and h (the channel) and the YAML as content, submitted through
// POST /events, the webhook secret read from the OK's response:{…}; runs
// and approvals read from GET /workflows/{id}/runs and
// …/runs/{run}/approvals with NIP-98; 46020 to run by hand; 46030/46031
// with the approval's SHA-256 in d.

// saveWorkflow submits alice's 30620 of id in channel; id "" mints one.
func saveWorkflow(t *testing.T, b *bridge, u user, id, channel, yaml string) (string, eventsAnswer) {
	t.Helper()
	if id == "" {
		id = uuid.NewString()
	}
	return id, b.submit(signed(t, u, 30620, nostr.Tags{{"d", id}, {"h", channel}}, yaml))
}

// response is the JSON of an OK's response:{…} (Buzz's
// parse_command_response).
func response(t *testing.T, msg string) map[string]string {
	t.Helper()
	js, ok := strings.CutPrefix(msg, "response:")
	if !ok {
		t.Fatalf("OK message %q is no response:", msg)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("response %q: %v", js, err)
	}
	return m
}

// getAs is a NIP-98 GET of path as u.
func getAs(t *testing.T, r *Relay, u user, path string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.HTTPURL+path, nil)
	req.Header.Set("Authorization", u.Token(t, http.MethodGet, r.HTTPURL+path, nil, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func runsOf(t *testing.T, r *Relay, u user, id string) workflow.RunsPage {
	t.Helper()
	st, out := getAs(t, r, u, "/workflows/"+id+"/runs")
	if st != http.StatusOK {
		t.Fatalf("GET runs: %d %s", st, out)
	}
	var p workflow.RunsPage
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRuns polls the runs route until ok holds, or fails after 30 s.
func waitRuns(t *testing.T, r *Relay, u user, id string, ok func([]workflow.RunWire) bool) []workflow.RunWire {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := runsOf(t, r, u, id)
		if ok(p.Runs) {
			return p.Runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of %s never as wanted: %+v", id, p.Runs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func statuses(runs []workflow.RunWire) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Status)
	}
	return out
}

func allDone(n int) func([]workflow.RunWire) bool {
	return func(rs []workflow.RunWire) bool {
		if len(rs) != n {
			return false
		}
		for _, r := range rs {
			if r.Status != "completed" && r.Status != "failed" {
				return false
			}
		}
		return true
	}
}

// workflowPosts are the channel's messages a workflow posted (relay-signed,
// tagged workflow-run).
func workflowPosts(t *testing.T, b *bridge, channel string, kind int) []nostr.Event {
	t.Helper()
	var out []nostr.Event
	for _, ev := range b.query(map[string]any{"kinds": []int{kind}, "#h": []string{channel}, "limit": 100}) {
		if ev.Tags.GetFirst([]string{"workflow-run"}) != nil {
			out = append(out, ev)
		}
	}
	return out
}

// A message trigger: a matching message runs the workflow once, after its
// commit, its message relay-signed with the owner p-tagged and its
// reaction on the trigger; a message the filter refuses runs nothing; the
// runs route shows the run with Buzz's trace. Definitions are refused as
// Buzz refuses them, and a non-member cannot save one.
func TestWorkflowMessageTrigger(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)

	_, bad := saveWorkflow(t, b, alice, "", ch, "name: ''\ntrigger:\n  on: message_posted\nsteps:\n  - id: s\n    action: send_message\n    text: x\n")
	if bad.Accepted || bad.Message != "invalid: workflow YAML parse error: invalid definition: name is required and must not be empty" {
		t.Fatalf("empty name: %+v", bad)
	}
	_, bad = saveWorkflow(t, b, alice, "not-a-uuid", ch, "name: A\ntrigger:\n  on: webhook\nsteps:\n  - id: s\n    action: delay\n    duration: 1m\n")
	if bad.Accepted || bad.Message != "invalid: workflow ID in d tag must be a valid UUID" {
		t.Fatalf("bad d: %+v", bad)
	}
	mallory := testkit.NewKey(t)
	_, bad = saveWorkflow(t, newBridge(t, r, mallory), mallory, "", ch, "name: A\ntrigger:\n  on: message_posted\nsteps:\n  - id: s\n    action: send_message\n    text: x\n")
	if bad.Accepted || !strings.HasPrefix(bad.Message, "restricted:") {
		t.Fatalf("a stranger's definition: %+v", bad)
	}

	id, ok := saveWorkflow(t, b, alice, "", ch, `name: Incident Alert
trigger:
  on: message_posted
  filter: 'str_contains(trigger_text, "P1")'
steps:
  - id: notify
    action: send_message
    text: 'Paging on-call: {{trigger.text}}'
  - id: ack
    action: add_reaction
    emoji: eyes
`)
	if !ok.Accepted || response(t, ok.Message)["workflow_id"] != id || response(t, ok.Message)["webhook_secret"] != "" {
		t.Fatalf("save: %+v", ok)
	}
	calm := publish(t, arl, alice, 9, nostr.Tags{{"h", ch}}, "all good")
	p1 := publish(t, arl, alice, 9, nostr.Tags{{"h", ch}}, "P1 database down")
	runs := waitRuns(t, r, alice, id, allDone(1))
	if runs[0].Status != "completed" || len(runs[0].ExecutionTrace) != 2 || runs[0].ExecutionTrace[0]["step_id"] != "notify" {
		t.Fatalf("run %+v", runs[0])
	}
	posts := workflowPosts(t, b, ch, 9)
	if len(posts) != 1 || posts[0].Content != "Paging on-call: P1 database down" || posts[0].PubKey != r.App.Signer.PublicKey() ||
		posts[0].Tags.GetFirst([]string{"p", alice.Pub}) == nil {
		t.Fatalf("posts %+v", posts)
	}
	reactions := workflowPosts(t, b, ch, 7)
	if len(reactions) != 1 || reactions[0].Content != "eyes" || reactions[0].Tags.GetFirst([]string{"e", p1.ID}) == nil {
		t.Fatalf("reactions %+v", reactions)
	}
	_ = calm
	time.Sleep(300 * time.Millisecond)
	if got := runsOf(t, r, alice, id).Runs; len(got) != 1 {
		t.Fatalf("%d runs, want 1 (the calm message matches no filter)", len(got))
	}
}

// A workflow that posts on every message does not trigger itself: one
// member message, one run, one post.
func TestWorkflowDoesNotTriggerItself(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	id, ok := saveWorkflow(t, b, alice, "", ch, "name: Echo\ntrigger:\n  on: message_posted\nsteps:\n  - id: echo\n    action: send_message\n    text: 'echo {{trigger.text}}'\n")
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	publish(t, arl, alice, 9, nostr.Tags{{"h", ch}}, "hello")
	waitRuns(t, r, alice, id, allDone(1))
	time.Sleep(time.Second)
	if n := len(runsOf(t, r, alice, id).Runs); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	if posts := workflowPosts(t, b, ch, 9); len(posts) != 1 {
		t.Fatalf("%d posts, want 1", len(posts))
	}
}

// Webhooks: a new webhook workflow's OK carries its secret once (an
// update none); POST /hooks/{id} with the secret runs it with the body's
// fields; a forged secret is 401 and runs nothing; an unknown id is 404;
// 46020 runs it by hand for a member, never for a stranger; the runs
// route is for the channel's members.
func TestWorkflowWebhookAndManualRuns(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	yaml := "name: Deploy\ntrigger:\n  on: webhook\nsteps:\n  - id: say\n    action: send_message\n    text: 'deploying {{trigger.env}}'\n"
	id, ok := saveWorkflow(t, b, alice, "", ch, yaml)
	secret := response(t, ok.Message)["webhook_secret"]
	if !ok.Accepted || len(secret) != 36 {
		t.Fatalf("save: %+v", ok)
	}
	again := b.submit(signedAt(t, alice, nostr.Now()+1, 30620, nostr.Tags{{"d", id}, {"h", ch}}, yaml+"  - id: bye\n    action: send_message\n    text: done\n"))
	if !again.Accepted || response(t, again.Message)["webhook_secret"] != "" {
		t.Fatalf("update: %+v", again)
	}
	hook := func(wid, sec, body string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/hooks/"+wid, strings.NewReader(body))
		req.Header.Set("X-Webhook-Secret", sec)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	if st, out := hook(id, "forged-"+secret[7:], `{"env":"prod"}`); st != http.StatusUnauthorized {
		t.Fatalf("forged secret: %d %s", st, out)
	}
	if st, _ := hook(uuid.NewString(), secret, `{}`); st != http.StatusNotFound {
		t.Fatalf("unknown id: %d", st)
	}
	st, out := hook(id, secret, `{"env":"prod"}`)
	if st != http.StatusAccepted || !strings.Contains(string(out), "run_id") {
		t.Fatalf("hook: %d %s", st, out)
	}
	runs := waitRuns(t, r, alice, id, allDone(1))
	if runs[0].Status != "completed" || len(runs[0].ExecutionTrace) != 2 {
		t.Fatalf("run %+v", runs[0])
	}
	if posts := workflowPosts(t, b, ch, 9); len(posts) != 2 || posts[0].Content == posts[1].Content {
		t.Fatalf("posts %+v", posts)
	}

	// Manual runs: a member's 46020 runs it (response:{"run_id"}); a
	// stranger's is refused as if there were no such workflow.
	bob, brl := loggedIn(t, r)
	publish(t, brl, bob, 9021, nostr.Tags{{"h", ch}}, "")
	trig := newBridge(t, r, bob).submit(signed(t, bob, 46020, nostr.Tags{{"d", id}}, ""))
	if !trig.Accepted || response(t, trig.Message)["run_id"] == "" {
		t.Fatalf("bob's trigger: %+v", trig)
	}
	mallory := testkit.NewKey(t)
	refusedTrig := newBridge(t, r, mallory).submit(signed(t, mallory, 46020, nostr.Tags{{"d", id}}, ""))
	if refusedTrig.Accepted || refusedTrig.Message != "invalid: workflow not found" {
		t.Fatalf("a stranger's 46020: %+v", refusedTrig)
	}
	waitRuns(t, r, alice, id, allDone(2))
	if st, _ := getAs(t, r, mallory, "/workflows/"+id+"/runs"); st != http.StatusForbidden {
		t.Fatalf("a stranger reads the runs: %d", st)
	}
	if st, _ := getAs(t, r, alice, "/workflows/"+uuid.NewString()+"/runs"); st != http.StatusNotFound {
		t.Fatalf("an unknown workflow's runs: %d", st)
	}
	if st, _ := getAs(t, r, alice, "/workflows/"+id+"/runs?limit=500"); st != http.StatusBadRequest {
		t.Fatalf("limit 500: %d", st)
	}
}

// An approval suspends the run (a row, no process waiting) and the app's
// 46030 with the approval_ref the approvals route lists resumes it; the
// later step reads the decision.
func TestWorkflowApprovalSuspendsAndResumes(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	id, ok := saveWorkflow(t, b, alice, "", ch, `name: Deploy Approval
trigger:
  on: webhook
steps:
  - id: request
    action: request_approval
    from: any
    message: Approve deploy?
    timeout: 4h
  - id: approved
    if: 'steps_request_output_approved == true'
    action: send_message
    text: Deploy approved
  - id: denied
    if: 'steps_request_output_approved == false'
    action: send_message
    text: Deploy denied
`)
	secret := response(t, ok.Message)["webhook_secret"]
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/hooks/"+id+"?secret="+secret, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("hook: %v %v", err, resp)
	}
	resp.Body.Close()
	runs := waitRuns(t, r, alice, id, func(rs []workflow.RunWire) bool { return len(rs) == 1 && rs[0].Status == "waiting_approval" })
	st, out := getAs(t, r, alice, "/workflows/"+id+"/runs/"+runs[0].ID+"/approvals")
	var ap struct{ Approvals []workflow.ApprovalWire }
	if st != http.StatusOK || json.Unmarshal(out, &ap) != nil || len(ap.Approvals) != 1 || ap.Approvals[0].Status != "pending" {
		t.Fatalf("approvals: %d %s", st, out)
	}
	reqs := b.query(map[string]any{"kinds": []int{46010}, "#h": []string{ch}})
	if len(reqs) != 1 || reqs[0].Tags.GetFirst([]string{"d", ap.Approvals[0].ApprovalRef}) == nil {
		t.Fatalf("46010 %+v", reqs)
	}
	grant := b.submit(signed(t, alice, 46030, nostr.Tags{{"d", ap.Approvals[0].ApprovalRef}}, "ship it"))
	if !grant.Accepted || response(t, grant.Message)["status"] != "granted" {
		t.Fatalf("grant: %+v", grant)
	}
	if again := b.submit(signed(t, alice, 46030, nostr.Tags{{"d", ap.Approvals[0].ApprovalRef}}, "twice")); again.Accepted || again.Message != "invalid: approval already granted" {
		t.Fatalf("second grant: %+v", again)
	}
	runs = waitRuns(t, r, alice, id, allDone(1))
	if runs[0].Status != "completed" {
		t.Fatalf("run %+v", runs[0])
	}
	posts := workflowPosts(t, b, ch, 9)
	if len(posts) != 1 || posts[0].Content != "Deploy approved" {
		t.Fatalf("posts %+v", posts)
	}
}

// A schedule: the runner creates the workflow's EventBridge schedule (the
// emulator's Scheduler API) after its commit, the schedule fires at the
// interval (an emulated clock), the run posts; deleting the workflow (kind
// 5 of its address, as the app deletes) deletes the schedule.
func TestWorkflowSchedule(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	id, ok := saveWorkflow(t, b, alice, "", ch, "name: Standup\ntrigger:\n  on: schedule\n  interval: 15m\nsteps:\n  - id: ask\n    action: send_message\n    text: Standup time\n")
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	ctx := ctxT(t)
	sc := waitSchedule(t, r, id, true)
	if sc.Expression != "cron(0/15 * * * ? *)" || sc.Group != emulator.ScheduleGroup || sc.Function != emulator.WorkflowRunnerFunction {
		t.Fatalf("schedule %+v: want the 15-minute interval on the clock", sc)
	}
	saved := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	for _, at := range []time.Time{saved.Add(7 * time.Minute), saved.Add(15 * time.Minute), saved.Add(30 * time.Minute)} {
		if _, err := r.Stack.Scheduler.FireSchedules(ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	runs := waitRuns(t, r, alice, id, allDone(2))
	if runs[0].Status != "completed" || runs[1].Status != "completed" {
		t.Fatalf("runs %v", statuses(runs))
	}
	if posts := workflowPosts(t, b, ch, 9); len(posts) != 2 {
		t.Fatalf("%d posts, want 2", len(posts))
	}
	// A fire retried (the same scheduled time) is the same run.
	if _, err := r.Stack.Scheduler.FireSchedules(ctx, saved.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := len(runsOf(t, r, alice, id).Runs); n != 2 {
		t.Fatalf("%d runs after a repeated fire, want 2", n)
	}
	b.accept(signed(t, alice, 5, nostr.Tags{{"a", fmt.Sprintf("30620:%s:%s", alice.Pub, id)}}, ""))
	waitSchedule(t, r, id, false)
	if n, err := r.Stack.Scheduler.FireSchedules(ctx, saved.Add(45*time.Minute)); err != nil || n != 0 {
		t.Fatalf("a deleted workflow's schedule fired %d times (%v)", n, err)
	}
}

// waitSchedule waits until the workflow id has a schedule (there) or has
// none, and returns it.
func waitSchedule(t *testing.T, r *Relay, id string, there bool) emulator.Schedule {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var found []emulator.Schedule
		for _, sc := range r.Stack.Scheduler.Schedules() {
			if strings.HasSuffix(sc.Name, "-"+id) {
				found = append(found, sc)
			}
		}
		if there && len(found) == 1 {
			return found[0]
		}
		if !there && len(found) == 0 {
			return emulator.Schedule{}
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedules of %s: %+v, want there=%v", id, found, there)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SEC-006: a removed owner's workflow no longer fires; a member who is no
// channel admin cannot save a call_webhook workflow; call_webhook to a
// private address is refused at run time (the push sender's egress
// rules), the run failed with Buzz's webhook error.
func TestWorkflowAuthorityAndEgress(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	publish(t, brl, bob, 9021, nostr.Tags{{"h", ch}}, "")
	bb := newBridge(t, r, bob)
	ab := newBridge(t, r, alice)

	_, refusedHook := saveWorkflow(t, bb, bob, "", ch, "name: Exfil\ntrigger:\n  on: message_posted\nsteps:\n  - id: out\n    action: call_webhook\n    url: https://example.com/x\n")
	if refusedHook.Accepted || refusedHook.Message != "restricted: call_webhook requires the channel owner or admin role" {
		t.Fatalf("a member's call_webhook workflow: %+v", refusedHook)
	}
	id, ok := saveWorkflow(t, bb, bob, "", ch, "name: Bob echo\ntrigger:\n  on: message_posted\n  filter: 'str_contains(trigger_text, \"bob\")'\nsteps:\n  - id: s\n    action: send_message\n    text: bob saw it\n")
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	publish(t, arl, alice, 9, nostr.Tags{{"h", ch}}, "hi bob")
	waitRuns(t, r, bob, id, allDone(1))
	// Alice removes bob from the channel: his workflow stops.
	publish(t, arl, alice, 9001, nostr.Tags{{"h", ch}, {"p", bob.Pub}}, "")
	publish(t, arl, alice, 9, nostr.Tags{{"h", ch}, {"x", "2"}}, "bob again")
	time.Sleep(2 * time.Second)
	if posts := workflowPosts(t, ab, ch, 9); len(posts) != 1 {
		t.Fatalf("%d posts after bob's removal, want 1", len(posts))
	}

	hid, hok := saveWorkflow(t, ab, alice, "", ch, "name: Leak\ntrigger:\n  on: webhook\nsteps:\n  - id: out\n    action: call_webhook\n    url: https://127.0.0.1:9/steal\n")
	if !hok.Accepted {
		t.Fatal(hok.Message)
	}
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/hooks/"+hid, nil)
	req.Header.Set("X-Webhook-Secret", response(t, hok.Message)["webhook_secret"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("hook: %v %v", err, resp)
	}
	resp.Body.Close()
	runs := waitRuns(t, r, alice, hid, allDone(1))
	if runs[0].Status != "failed" || runs[0].ErrorCode == nil || *runs[0].ErrorCode != "webhook_failed" ||
		!strings.Contains(*runs[0].ErrorMessage, "127.0.0.1") || !strings.Contains(*runs[0].ErrorMessage, "not a public") {
		msg := ""
		if runs[0].ErrorMessage != nil {
			msg = *runs[0].ErrorMessage
		}
		t.Fatalf("run %+v: %q", runs[0], msg)
	}
}

// Another community's workflow: the same workflow id in community B is
// B's own; A's members read none of B's runs, and A's webhook secret opens
// nothing in B.
func TestWorkflowOtherCommunity(t *testing.T) {
	r := StartTest(t, Options{Workflows: true})
	ctx := ctxT(t)
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees"}); err != nil {
		t.Fatal(err)
	}
	a, b := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	cha, chb := createChannelID(), createChannelID()
	a.accept(alice, signed(t, alice, 9007, nostr.Tags{{"h", cha}, {"name", "a"}, {"visibility", "open"}}, ""))
	b.accept(bob, signed(t, bob, 9007, nostr.Tags{{"h", chb}, {"name", "b"}, {"visibility", "open"}}, ""))
	id := uuid.NewString()
	yaml := "name: W\ntrigger:\n  on: webhook\nsteps:\n  - id: s\n    action: send_message\n    text: hi\n"
	sa := a.submit(alice, signed(t, alice, 30620, nostr.Tags{{"d", id}, {"h", cha}}, yaml))
	sb := b.submit(bob, signed(t, bob, 30620, nostr.Tags{{"d", id}, {"h", chb}}, yaml))
	if !sa.Accepted || !sb.Accepted {
		t.Fatalf("saves: %+v %+v", sa, sb)
	}
	secretA := response(t, sa.Message)["webhook_secret"]
	st, _ := b.do(nil, http.MethodPost, "/hooks/"+id+"?secret="+secretA, "", "", nil)
	if st != http.StatusUnauthorized {
		t.Fatalf("A's secret on B's workflow: %d", st)
	}
	if st, _ := b.do(&alice, http.MethodGet, "/workflows/"+id+"/runs", "", "", nil); st != http.StatusForbidden {
		t.Fatalf("alice reads B's runs: %d", st)
	}
	if st, _ := a.do(&alice, http.MethodGet, "/workflows/"+id+"/runs", "", "", nil); st != http.StatusOK {
		t.Fatalf("alice reads A's runs: %d", st)
	}
}

// A run killed mid-step completes with each effect once: the runner runs
// as its own binary; while its call_webhook waits for an answer the
// emulator kills the process; Lambda's retry (emulated) finds the message
// step done (not posted again) and the call started, makes the call again
// with the same Idempotency-Key, and posts the last message once.
func TestWorkflowRunKilledMidStepCompletesOnce(t *testing.T) {
	r := StartTest(t, Options{WorkflowRunnerProcesses: 1, WorkflowPrivateWebhooks: true})
	var mu sync.Mutex
	var keys []string
	held := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		keys = append(keys, req.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n == 1 {
			once.Do(func() { close(held) })
			select { // the runner dies: no answer reaches it
			case <-req.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	alice, arl := loggedIn(t, r)
	ch := createChannel(t, arl, alice, "open")
	b := newBridge(t, r, alice)
	id, ok := saveWorkflow(t, b, alice, "", ch, fmt.Sprintf(`name: Crash
trigger:
  on: webhook
steps:
  - id: first
    action: send_message
    text: first
  - id: call
    action: call_webhook
    url: %s/notify
    body: '{"n":1}'
  - id: last
    action: send_message
    text: last
`, srv.URL))
	if !ok.Accepted {
		t.Fatal(ok.Message)
	}
	req, _ := http.NewRequest(http.MethodPost, r.HTTPURL+"/hooks/"+id, bytes.NewReader(nil))
	req.Header.Set("X-Webhook-Secret", response(t, ok.Message)["webhook_secret"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("hook: %v %v", err, resp)
	}
	resp.Body.Close()
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatal("the runner never made the call")
	}
	if n := r.Runner.Crash(); n != 1 {
		t.Fatalf("killed %d runner processes, want 1", n)
	}
	runs := waitRuns(t, r, alice, id, allDone(1))
	r.Lambda.Wait()
	if runs[0].Status != "completed" {
		t.Fatalf("run %+v", runs[0])
	}
	posts := workflowPosts(t, b, ch, 9)
	var texts []string
	for _, p := range posts {
		texts = append(texts, p.Content)
	}
	if len(posts) != 2 || !(texts[0] == "first" && texts[1] == "last" || texts[0] == "last" && texts[1] == "first") {
		t.Fatalf("posts %v, want first and last once each", texts)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] != keys[1] || keys[0] != runs[0].ID+":call" {
		t.Fatalf("calls with keys %v, want the cut one and its retry under one key", keys)
	}
}
