package model

import "testing"

// A workflow community (10 workflows, 1,000 runs, 10 schedules every 15
// minutes): schedules spread over their interval (from their save) keep a
// pausing Aurora awake all month; on the clock (as built) they share one
// wake per interval (2,920 wakes of 375 s: 304.2 h); a webhook
// call that matches nothing wakes it only while the secret lives in the
// database alone.
func TestWorkflowBill(t *testing.T) {
	s, err := Assumed("community", "")
	if err != nil {
		t.Fatal(err)
	}
	w := Workflows{Definitions: 10, Runs: 1000, Schedules: 10, EveryMinutes: 15}
	got := map[string]WorkflowMonth{}
	for _, d := range WorkflowDesigns {
		m, err := WorkflowBill(w, d, s, USEast1)
		if err != nil {
			t.Fatal(err)
		}
		got[d.Name] = m
	}
	if m := got["from save"]; m.Fires != 29200 || m.AwakeHours < 729 {
		t.Errorf("from save: %.0f fires, %.1f h awake; want 29200 and the whole month", m.Fires, m.AwakeHours)
	}
	if m := got["as built"]; m.Resumes != 2920 || m.AwakeHours > 305 || Total(m.Lines) >= Total(got["from save"].Lines) {
		t.Errorf("as built (on the clock): %d resumes, %.1f h, $%.2f", m.Resumes, m.AwakeHours, Total(m.Lines))
	}
	w.Schedules, w.Forged = 0, 10000
	spread, _ := WorkflowBill(w, WorkflowDesigns[0], s, USEast1)
	off, _ := WorkflowBill(w, WorkflowDesigns[2], s, USEast1)
	if spread.Resumes == 0 || off.Resumes != 0 || off.AwakeHours != 0 {
		t.Errorf("forged calls: %d resumes with the secret in the database, %d (%.1f h) without", spread.Resumes, off.Resumes, off.AwakeHours)
	}
	if _, err := WorkflowBill(Workflows{Schedules: 1}, WorkflowDesigns[0], s, USEast1); err == nil {
		t.Error("a schedule without an interval priced")
	}
}
