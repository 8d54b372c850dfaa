package workflow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseAcceptsBuzzShapes(t *testing.T) {
	for _, c := range []struct {
		name, src string
		check     func(t *testing.T, d *Def)
	}{
		{"message posted with a filter", "name: 'Incident Alert'\ndescription: 'Alert on P1 messages'\ntrigger:\n  on: message_posted\n  filter: 'str_contains(trigger_text, \"P1\")'\nsteps:\n  - id: notify\n    action: send_message\n    text: 'P1 alert'\n",
			func(t *testing.T, d *Def) {
				if d.Name != "Incident Alert" || !d.Enabled || len(d.Steps) != 1 || d.Steps[0].ID != "notify" || *d.Trigger.Filter == "" {
					t.Fatalf("%+v", d)
				}
			}},
		{"reaction added", "name: Triage\ntrigger:\n  on: reaction_added\n  emoji: clipboard\nsteps:\n  - id: ack\n    action: add_reaction\n    emoji: eyes\n",
			func(t *testing.T, d *Def) {
				if *d.Trigger.Emoji != "clipboard" || d.Steps[0].Action.Emoji != "eyes" {
					t.Fatalf("%+v", d)
				}
			}},
		{"schedule cron", "name: Daily Standup\ntrigger:\n  on: schedule\n  cron: '0 9 * * 1-5'\nsteps:\n  - id: prompt\n    action: send_message\n    text: Standup time\n", nil},
		{"schedule interval", "name: I\ntrigger:\n  on: schedule\n  interval: 30m\nsteps:\n  - id: s1\n    action: send_message\n    text: tick\n", nil},
		{"every action", "name: All Actions\ntrigger:\n  on: webhook\nsteps:\n  - id: msg\n    action: send_message\n    text: Hello\n    channel: general\n  - id: dm\n    action: send_dm\n    to: '{{trigger.author}}'\n    text: You\n  - id: topic\n    action: set_channel_topic\n    topic: Status\n  - id: react\n    action: add_reaction\n    emoji: white_check_mark\n  - id: hook\n    action: call_webhook\n    url: https://hooks.example.com/notify\n    method: POST\n  - id: approve\n    action: request_approval\n    from: '@manager'\n    message: Approve?\n    timeout: 4h\n  - id: wait\n    action: delay\n    duration: 5m\n",
			func(t *testing.T, d *Def) {
				if len(d.Steps) != 7 || !d.RequiresElevatedAuthority() || d.RequiresDurableScheduler() {
					t.Fatalf("%+v", d)
				}
			}},
		{"json", `{"name":"J","trigger":{"on":"webhook"},"steps":[{"id":"s","action":"delay","duration":"1m"}],"enabled":false}`,
			func(t *testing.T, d *Def) {
				if d.Enabled {
					t.Fatal("enabled: false lost")
				}
			}},
		{"reply in thread on a message trigger", "name: A\ntrigger:\n  on: diff_posted\nsteps:\n  - id: s1\n    action: send_message\n    text: hi\n    reply_in_thread: true\n", nil},
		{"dependencies on earlier steps", "name: D\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: barrier\n  - id: b\n    depends_on: [a]\n    action: barrier\n",
			func(t *testing.T, d *Def) {
				if !d.RequiresDurableScheduler() {
					t.Fatal("a DAG needs the durable scheduler")
				}
			}},
		{"unknown fields ignored", "name: U\nextra: 1\ntrigger:\n  on: webhook\n  what: x\nsteps:\n  - id: s\n    action: delay\n    duration: 5s\n    nope: 2\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, d)
			}
			var back map[string]any
			if err := json.Unmarshal(d.Canonical(), &back); err != nil {
				t.Fatal(err)
			}
			again, err := Parse(string(d.Canonical()))
			if err != nil {
				t.Fatalf("canonical JSON does not parse again: %v", err)
			}
			if string(again.Canonical()) != string(d.Canonical()) {
				t.Fatalf("canonical JSON not stable:\n%s\n%s", d.Canonical(), again.Canonical())
			}
		})
	}
}

func TestParseRefusesAsBuzz(t *testing.T) {
	step := "steps:\n  - id: s1\n    action: send_message\n    text: hi\n"
	for _, c := range []struct{ src, want string }{
		{"name: ''\ntrigger:\n  on: message_posted\n" + step, "invalid definition: name is required and must not be empty"},
		{"name: N\ntrigger:\n  on: message_posted\nsteps: []\n", "invalid definition: at least one step is required"},
		{"name: N\ntrigger:\n  on: message_posted\nsteps:\n  - id: a\n    action: delay\n    duration: 1s\n  - id: a\n    action: delay\n    duration: 1s\n", "invalid definition: duplicate step id: a"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: 'a-b'\n    action: delay\n    duration: 1s\n", "invalid definition: step id 'a-b' is invalid: must contain only alphanumeric characters and underscores"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: ' '\n    action: delay\n    duration: 1s\n", "invalid definition: step id must not be empty"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: " + strings.Repeat("a", 65) + "\n    action: delay\n    duration: 1s\n", "is invalid: must contain only"},
		{"name: N\ntrigger:\n  on: schedule\n" + step, "invalid definition: schedule trigger requires either 'cron' or 'interval'"},
		{"name: N\ntrigger:\n  on: schedule\n  cron: '* * * * *'\n  interval: 1h\n" + step, "invalid definition: schedule trigger cannot specify both 'cron' and 'interval'; use one or the other"},
		{"name: N\ntrigger:\n  on: schedule\n  cron: not-a-cron\n" + step, "invalid definition: invalid cron expression 'not-a-cron'"},
		{"name: N\ntrigger:\n  on: schedule\n  cron: '61 * * * *'\n" + step, "invalid definition: invalid cron expression '61 * * * *'"},
		{"name: N\ntrigger:\n  on: schedule\n  interval: 30s\n" + step, "invalid definition: interval must be at least 60s (cron loop ticks every 60 seconds)"},
		{"name: N\ntrigger:\n  on: schedule\n  interval: soon\n" + step, "invalid definition: invalid interval 'soon': expected a duration like '30m', '1h', or '60s'"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: s1\n    action: send_message\n    text: hi\n    reply_in_thread: true\n", "invalid definition: step 's1': reply_in_thread requires a message-based trigger (message_posted, reaction_added, or diff_posted); schedule and webhook triggers have no message to reply to"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    depends_on: [b]\n    action: barrier\n  - id: b\n    action: barrier\n", "invalid definition: step 'a': dependency 'b' must reference an earlier step"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    depends_on: [zz]\n    action: barrier\n", "invalid definition: step 'a': unknown dependency 'zz'"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: barrier\n  - id: b\n    depends_on: [a, a]\n    action: barrier\n", "invalid definition: step 'b': duplicate dependency 'a'"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    depends_on: [a]\n    action: barrier\n", "invalid definition: step 'a': dependency 'a' must reference an earlier step"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: run_agent\n    agent: x\n    identity: ABCD\n    prompt: p\n    output_schema: {}\n", "invalid definition: step 'a': agent identity must be 32 lowercase hex bytes"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: verify_artifact\n    schema: 3\n", "invalid definition: step 'a': inline JSON Schema must be an object"},
		{"name: N\ntrigger:\n  on: sometimes\n" + step, "invalid YAML: trigger: unknown variant `sometimes`"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: explode\n", "invalid YAML: steps[0]: unknown variant `explode`"},
		{"trigger:\n  on: webhook\n" + step, "invalid YAML: missing field `name`"},
		{"name: N\n" + step, "invalid YAML: missing field `trigger`"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: send_message\n", "invalid YAML: steps[0]: missing field `text`"},
		{"name: N\ntrigger:\n  on: webhook\nsteps:\n  - id: a\n    action: send_message\n    text: [1]\n", "invalid YAML: steps[0].text: invalid type: sequence, expected a string"},
		{"- just\n- a list\n", "invalid YAML: invalid type: sequence, expected struct WorkflowDef"},
		{"name: [unclosed\n", "invalid YAML: "},
		{"", "invalid YAML: invalid type: unit value, expected struct WorkflowDef"},
		{strings.Repeat("#", MaxContentBytes+1), "invalid definition: definition exceeds 65536 bytes"},
	} {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%.60q) = %v, want %q", c.src, err, c.want)
		}
	}
}

func TestDurationSeconds(t *testing.T) {
	for in, want := range map[string]uint64{"5m": 300, "1h": 3600, "30s": 30, "45": 45, " 2m ": 120} {
		if got, err := DurationSeconds(in); err != nil || got != want {
			t.Errorf("DurationSeconds(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "m", "1.5h", "-1s", "1d", "99999999999999999999h", "+5s"} {
		if _, err := DurationSeconds(in); err == nil {
			t.Errorf("DurationSeconds(%q) accepted", in)
		}
	}
}

func TestCron(t *testing.T) {
	c, err := ParseCron("30 9 * * 2-6") // 9:30, Monday to Friday (1 = Sunday)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC) // a Saturday
	next, ok := c.Next(at)
	if !ok || next != time.Date(2026, 12, 7, 9, 30, 0, 0, time.UTC) {
		t.Fatalf("Next = %v", next)
	}
	for _, bad := range []string{"* * * *", "* * * * 0", "60 * * * *", "* * 32 * *", "a b c d e", "*/0 * * * *", "5-1 * * * *"} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("ParseCron(%q) accepted", bad)
		}
	}
	for _, good := range []string{"0 9 * * MON-FRI", "*/15 * * * *", "0 0 1 JAN *", "0 0 9 * * ?", "0 0 9 ? * 2 2027", "0,30 8-18 * * *"} {
		if _, err := ParseCron(good); err != nil {
			t.Errorf("ParseCron(%q): %v", good, err)
		}
	}
}

func TestScheduleExpression(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		tr   Trigger
		want string
	}{
		{Trigger{On: OnSchedule, Interval: s("15m")}, "cron(0/15 * * * ? *)"},
		{Trigger{On: OnSchedule, Interval: s("7m")}, "rate(7 minutes)"},
		{Trigger{On: OnSchedule, Interval: s("2h")}, "cron(0 0/2 * * ? *)"},
		{Trigger{On: OnSchedule, Interval: s("5h")}, "rate(300 minutes)"},
		{Trigger{On: OnSchedule, Interval: s("24h")}, "cron(0 0/24 * * ? *)"},
		{Trigger{On: OnSchedule, Interval: s("60s")}, "rate(1 minute)"},
		{Trigger{On: OnSchedule, Interval: s("90s")}, "cron(0/2 * * * ? *)"},
		{Trigger{On: OnSchedule, Cron: s("0 9 * * 2-6")}, "cron(0 9 ? * 2-6 *)"},
		{Trigger{On: OnSchedule, Cron: s("*/5 * 1 * *")}, "cron(*/5 * 1 * ? *)"},
	} {
		got, err := c.tr.ScheduleExpression()
		if err != nil || got != c.want {
			t.Errorf("%+v: %q, %v; want %q", c.tr, got, err, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	c := &TriggerContext{Text: "He said \"hi\"\nbye", Author: "e17e5abf7b1dbd363f0ed6fbda2455609727b2555428dea251388c542cd2f03f", WebhookFields: map[string]string{"env": "prod"}}
	out := Outputs{"ask": {"approved": true, "n": float64(3)}}
	for in, want := range map[string]string{
		"Alert: {{trigger.text | truncate(7)}}":                "Alert: He said",
		"{{trigger.author | npub}}":                            "npub1u9l940mmrk7nv0cw6maa5fz4vztj0vj42s5dagj38zx9gtxj7qls94fpux",
		`{"m":{{trigger.text | json}}}`:                        `{"m":"He said \"hi\"\nbye"}`,
		"{{steps.ask.output.approved}} {{steps.ask.output.n}}": "true 3",
		"{{unknown.var}} {{trigger.env}}":                      "{{unknown.var}} prod",
		"open {{trigger.text":                                  "open {{trigger.text",
		"none":                                                 "none",
	} {
		got, err := Resolve(in, c, out)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Resolve("{{trigger.text | shout}}", c, out); err == nil || err.Error() != "template error: unknown filter: shout" {
		t.Errorf("unknown filter: %v", err)
	}
}

func TestEval(t *testing.T) {
	vars := Vars(&TriggerContext{Text: "P1 incident in prod", WebhookFields: map[string]string{"trigger_text": "spoof", "sev": "2"}},
		Outputs{"request": {"approved": false, "count": float64(2)}})
	for expr, want := range map[string]bool{
		`str_contains(trigger_text, "P1")`:                                          true,
		`str_contains(trigger_text, "P1") || str_contains(trigger_text, "S")`:       true,
		`!str_contains(trigger_text, "P1")`:                                         false,
		`steps_request_output_approved == true`:                                     false,
		`steps_request_output_approved == false && steps_request_output_count >= 2`: true,
		`trigger_sev == "2"`:                                                        true,
		`str_len(trigger_text) > 5 && (1 + 2 * 3) == 7`:                             true,
		`str::to_lowercase(trigger_text) == "p1 incident in prod"`:                  true,
		`str_starts_with(trigger_text, "P1") != str_ends_with(trigger_text, "x")`:   true,
	} {
		got, err := Eval(expr, vars)
		if err != nil || got != want {
			t.Errorf("Eval(%s) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{`trigger_text`, `nope == 1`, `str_contains(trigger_text)`, `(true`, `1 / 0 == 1`, `"open`, `true &&`, strings.Repeat("(", 200) + "true" + strings.Repeat(")", 200), strings.Repeat("!", MaxExprBytes+1), `unknown_fn(1)`, `@`} {
		if _, err := Eval(bad, vars); err == nil {
			t.Errorf("Eval(%q) accepted", bad)
		} else if !strings.HasPrefix(err.Error(), "condition evaluation error: ") {
			t.Errorf("Eval(%q): %v", bad, err)
		}
	}
}

func TestSecrets(t *testing.T) {
	s := NewWebhookSecret()
	if len(s) != 36 || s == NewWebhookSecret() {
		t.Fatalf("secret %q", s)
	}
	if !SecretMatches(s, Hash(s)) || SecretMatches(s+"x", Hash(s)) || SecretMatches("", Hash("")) || SecretMatches(s, nil) {
		t.Fatal("SecretMatches")
	}
	if len(HashHex(NewApprovalToken())) != 64 {
		t.Fatal("HashHex")
	}
}
