package workflow

import (
	"testing"
)

// FuzzParse: any content is a definition or a refusal naming what is
// wrong; never a panic. An accepted definition's canonical JSON parses
// again to the same definition.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"name: A\ntrigger:\n  on: message_posted\nsteps:\n  - id: s\n    action: send_message\n    text: hi\n",
		`{"name":"J","trigger":{"on":"schedule","cron":"*/5 * * * *"},"steps":[{"id":"s","action":"delay","duration":"1m"}]}`,
		"name: &a [*a]\n", "a: !!binary x", "- - - -", "{", "name: N\ntrigger: {on: webhook}\nsteps: [{id: a, action: call_webhook, url: 'https://x', headers: {A: b}}]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		again, err := Parse(string(d.Canonical()))
		if err != nil {
			t.Fatalf("canonical JSON %s refused: %v", d.Canonical(), err)
		}
		if string(again.Canonical()) != string(d.Canonical()) {
			t.Fatalf("canonical not stable")
		}
	})
}

// FuzzEval: any expression evaluates or is a condition error.
func FuzzEval(f *testing.F) {
	for _, s := range []string{`str_contains(trigger_text, "P1")`, `1 + 2 == 3`, `!(a || b)`, `"x" + "y" == "xy"`} {
		f.Add(s)
	}
	vars := Vars(&TriggerContext{Text: "hello"}, nil)
	f.Fuzz(func(t *testing.T, expr string) {
		_, _ = Eval(expr, vars)
	})
}
