package main

import (
	"strings"
	"testing"
)

// Workflows' EventBridge Scheduler (workflows.go, docs/workflows.md): one
// schedule group, deleted with the stack (and every schedule in it); the
// runner is told the group and the schedules' role; the role is assumable
// by the Scheduler for this account only and may invoke the runner and
// nothing else; only the runner may write and delete schedules, in that
// group only, and pass that role, to the Scheduler only.
func TestWorkflowSchedulesLeastPrivilege(t *testing.T) {
	s := defaultStack(t)
	fns := s.ourFunctions(t)
	runner := fns["workflow-runner"]
	groups := s.ofType("AWS::Scheduler::ScheduleGroup")
	if len(groups) != 1 {
		t.Fatalf("%d schedule groups, want 1", len(groups))
	}
	var group string
	for id, g := range groups {
		group = id
		if g.DeletionPolicy != "Delete" {
			t.Errorf("schedule group deletion policy %q: its schedules would outlive the stack", g.DeletionPolicy)
		}
	}
	var role string
	for id := range s.ofType("AWS::IAM::Role") {
		if strings.HasPrefix(id, "WorkflowSchedulerRole") {
			role = id
		}
	}
	if role == "" {
		t.Fatal("no WorkflowSchedulerRole")
	}
	trust := js(s.res[role].Properties["AssumeRolePolicyDocument"])
	if !strings.Contains(trust, `"Service":"scheduler.amazonaws.com"`) || !strings.Contains(trust, `"aws:SourceAccount":{"Ref":"AWS::AccountId"}`) {
		t.Errorf("scheduler role trust %s", trust)
	}
	env := s.env(t, "workflow-runner")
	groupName, _ := s.res[group].Properties["Name"].(string)
	if got := env["WORKFLOW_SCHEDULE_GROUP"]; groupName == "" || got != groupName && js(got) != js(map[string]any{"Ref": group}) {
		t.Errorf("WORKFLOW_SCHEDULE_GROUP %s, want the group %s (%q)", js(got), group, groupName)
	}
	if got := js(env["WORKFLOW_SCHEDULER_ROLE_ARN"]); got != js(map[string]any{"Fn::GetAtt": []any{role, "Arn"}}) {
		t.Errorf("WORKFLOW_SCHEDULER_ROLE_ARN %s", got)
	}
	runnerArn := js(map[string]any{"Fn::GetAtt": []any{runner, "Arn"}})
	sts, roles := s.statements()
	for i, st := range sts {
		action, res := js(st["Action"]), js(st["Resource"])
		onRole := false
		for _, r := range roles[i] {
			onRole = onRole || strings.Contains(r, `"`+role+`"`)
		}
		if onRole && (action != `"lambda:InvokeFunction"` || res != runnerArn) {
			t.Errorf("the scheduler role may %s on %s: only the runner's Invoke", action, res)
		}
	}
	sched, pass := false, false
	for name, id := range fns {
		for _, st := range s.grantsOf(id) {
			action, res := js(st["Action"]), js(st["Resource"])
			if strings.Contains(action, "scheduler:") {
				if name != "workflow-runner" {
					t.Errorf("%s may %s", name, action)
				}
				if !strings.Contains(res, ":schedule/"+groupName+"/*") {
					t.Errorf("the runner's %s on %s: not its group's schedules", action, res)
				}
				sched = sched || strings.Contains(action, "scheduler:CreateSchedule") && strings.Contains(action, "scheduler:UpdateSchedule")
				sched = sched && strings.Contains(js(s.grantsOf(id)), "scheduler:DeleteSchedule")
			}
			if strings.Contains(action, "iam:PassRole") {
				if name != "workflow-runner" || !strings.Contains(res, role) || !strings.Contains(js(st["Condition"]), `"iam:PassedToService":"scheduler.amazonaws.com"`) {
					t.Errorf("%s may pass %s (%s)", name, res, js(st["Condition"]))
				}
				pass = true
			}
		}
	}
	if !sched || !pass {
		t.Errorf("the runner cannot keep its schedules: create/update/delete %v, pass the role %v", sched, pass)
	}
}
