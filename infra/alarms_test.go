package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// alarmIDs are the template's alarms by their logical ids less CDK's
// 8-character hash: the construct id without its non-alphanumerics
// ("db-awake-hours" is dbawakehours<hash>), sorted.
func alarmIDs(t *testing.T, s synthesized) []string {
	t.Helper()
	var out []string
	for id := range s.ofType("AWS::CloudWatch::Alarm") {
		out = append(out, id[:len(id)-8])
	}
	sort.Strings(out)
	return out
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// The alarms of every profile, with their thresholds: Aurora awake whole
// hours on more than dbAwakeHours of 24, the HTTP 5xx less the resume
// 503s (metric math over the metric filter on the HTTP functions' logs),
// both notifying the topic; the monthly budget at the profile's (or the
// operator's) threshold, notifying the topic.
func TestAlarmsAndBudgetInEveryProfile(t *testing.T) {
	for _, c := range []struct {
		name   string
		ctx    map[string]any
		budget float64
		hours  float64
	}{
		{"community", nil, 10, 6},
		{"managed", map[string]any{"profile": "managed"}, 100, 6},
		{"operator-set", map[string]any{"budgetUSD": 25, "dbAwakeHours": 3}, 25, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := synth(t, c.ctx)
			var awake, errs map[string]any
			for _, r := range s.ofType("AWS::CloudWatch::Alarm") {
				p := r.Properties
				switch {
				case p["MetricName"] == "ServerlessDatabaseCapacity":
					awake = p
				case strings.Contains(js(p["Metrics"]), ResumingMetric):
					errs = p
				}
			}
			if awake == nil || awake["Statistic"] != "Minimum" || awake["Period"] != float64(3600) || awake["Threshold"] != float64(0) ||
				awake["ComparisonOperator"] != "GreaterThanThreshold" || awake["EvaluationPeriods"] != float64(24) ||
				awake["DatapointsToAlarm"] != c.hours+1 || !strings.Contains(js(awake["AlarmActions"]), "Alarms") {
				t.Errorf("db-awake-hours: %s", js(awake))
			}
			if errs == nil || errs["Threshold"] != float64(HTTP5xxThreshold) || !strings.Contains(js(errs["Metrics"]), "FILL(m5xx, 0) - FILL(resuming, 0)") ||
				!strings.Contains(js(errs["Metrics"]), "5xx") || !strings.Contains(js(errs["AlarmActions"]), "Alarms") {
				t.Errorf("http-5xx: %s", js(errs))
			}
			filters := s.ofType("AWS::Logs::MetricFilter")
			if len(filters) != len(httpFunctions()) {
				t.Errorf("%d resume metric filters, want one per HTTP function (%d)", len(filters), len(httpFunctions()))
			}
			for _, f := range filters {
				if f.Properties["FilterPattern"] != ResumingPattern || !strings.Contains(js(f.Properties["MetricTransformations"]), ResumingMetric) {
					t.Errorf("metric filter %s", js(f.Properties))
				}
			}
			budgets := s.ofType("AWS::Budgets::Budget")
			if len(budgets) != 1 {
				t.Fatalf("%d budgets", len(budgets))
			}
			for _, b := range budgets {
				if got := js(b.Properties["Budget"]); !strings.Contains(got, `"Amount":`+js(c.budget)) || !strings.Contains(got, `"TimeUnit":"MONTHLY"`) {
					t.Errorf("budget %s, want %g a month", got, c.budget)
				}
				if !strings.Contains(js(b.Properties["NotificationsWithSubscribers"]), `"SubscriptionType":"SNS"`) {
					t.Errorf("the budget does not notify the topic: %s", js(b.Properties))
				}
			}
			if pol := s.ofType("AWS::SNS::TopicPolicy"); len(pol) != 1 || !strings.Contains(js(pol), "budgets.amazonaws.com") {
				t.Errorf("topic policy %s", js(pol))
			}
		})
	}
}

// docs/deploy.md's alarm table is the stacks' alarms: each row's id
// (with <function> standing for every deployed function) in the
// profiles it names, and nothing else.
func TestDocsAlarmsAreTheStacks(t *testing.T) {
	b, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Alarms\n")
	if start < 0 {
		t.Fatal("docs/deploy.md has no Alarms section")
	}
	section := doc[start+1:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^|]+) \\|")
	expand := func(managed, natInstance bool) []string {
		var out []string
		for _, m := range row.FindAllStringSubmatch(section, -1) {
			id, where := m[1], strings.TrimSpace(m[2])
			switch {
			case strings.HasPrefix(where, "`alarms`") && !managed, strings.HasPrefix(where, "`egress=nat-instance`") && !natInstance:
				continue
			}
			switch {
			case strings.Contains(id, "<function>"):
				for _, f := range Deployed(Settings{}) {
					if f.SendsPush || f.Dials || f.RunsWorkflows {
						continue // no alarm of its own (docs/push.md, docs/workflows.md)
					}
					out = append(out, nonAlnum.ReplaceAllString(strings.ReplaceAll(id, "<function>", f.Name), ""))
				}
			case strings.Contains(id, "<n>"):
				out = append(out, nonAlnum.ReplaceAllString(strings.ReplaceAll(id, "<n>", "1"), ""))
			default:
				out = append(out, nonAlnum.ReplaceAllString(id, ""))
			}
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		name                 string
		ctx                  map[string]any
		managed, natInstance bool
	}{
		{"community", nil, false, false},
		{"managed", map[string]any{"profile": "managed"}, true, false},
		{"community nat-instance", map[string]any{"egress": "nat-instance"}, false, true},
	} {
		got, want := alarmIDs(t, synth(t, c.ctx)), expand(c.managed, c.natInstance)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: the stack's alarms\n  %v\ndocs/deploy.md's\n  %v", c.name, got, want)
		}
	}
}
