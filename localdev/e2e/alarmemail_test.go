package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestDeployAsksForAnAlarmAddress: make deploy's localdev/alarm-email.sh
// adds -c alarmEmail=ADDRESS when asked at a terminal (script(1) gives it
// one), adds nothing for an empty answer or when CDK_ARGS sets one, says
// plainly that alarms go nowhere (and how to set an address) when stdin is
// not a terminal or the answer is empty, and fails after three answers that
// are not an address.
func TestDeployAsksForAnAlarmAddress(t *testing.T) {
	const nowhere = "reach no one"
	run := func(tty bool, args, input string) (out, errOut string, code int) {
		t.Helper()
		var cmd *exec.Cmd
		if tty {
			if _, err := exec.LookPath("script"); err != nil {
				t.Skip("script(1) (util-linux) is not installed: the prompt at a terminal was not tested")
			}
			cmd = exec.Command("script", "-qec", "../alarm-email.sh '"+args+"'", "/dev/null")
		} else {
			cmd = exec.Command("../alarm-email.sh", args)
		}
		var o, e bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(input), &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	if out, e, code := run(false, "-c profile=managed -c alarmEmail=ops@example.com", ""); out != "" || e != "" || code != 0 {
		t.Errorf("CDK_ARGS with alarmEmail: %q %q %d, want nothing", out, e, code)
	}
	if out, e, code := run(false, "-c profile=managed", ""); out != "" || !strings.Contains(e, nowhere) || !strings.Contains(e, "-c alarmEmail=") || code != 0 {
		t.Errorf("no terminal: %q %q %d, want the plain warning and nothing added", out, e, code)
	}
	if out, _, code := run(true, "-c profile=managed", "ops@example.com\n"); !strings.Contains(out, "-c alarmEmail=ops@example.com") || code != 0 {
		t.Errorf("an address at the terminal: %q %d", out, code)
	}
	if out, _, code := run(true, "", "\n"); strings.Contains(out, "-c alarmEmail=ops") || !strings.Contains(out, nowhere) || code != 0 {
		t.Errorf("an empty answer: %q %d", out, code)
	}
	if out, _, code := run(true, "", "a b\nnope\n$(id)@x\n"); strings.Contains(out, "\n-c alarmEmail=") || code != 1 {
		t.Errorf("three bad answers: %q %d, want exit 1 and nothing added", out, code)
	}
}
