// Command restore is the restore runbook of docs/deploy.md ("Backups and
// restore"), `make restore`: it checks the synthesized template (the
// restore must go through CloudFormation: runbook.Check), then prints, or
// with -run runs, the AWS steps that restore the stack from a snapshot or
// a point in time by setting its DbRestoreSnapshot parameter; no cluster
// identifier is ever swapped behind CloudFormation.
//
//	go run ./localdev/restore -snapshot buzzrelay-default-final            # print the steps
//	go run ./localdev/restore -time 2026-12-05T08:00:00Z -run              # run them
//	go run ./localdev/restore -local                                       # the data steps on DATABASE_URL
//
// -local runs the same data steps on the local Postgres (runbook.Local):
// dump, a new database restored from it, the migrations on the copy, and
// a comparison with the original; it prints the copy's DATABASE_URL.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/buzzrelay/relay/localdev/restore/runbook"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
)

func main() {
	var o runbook.Options
	tpl := flag.String("template", "", "the stack's synthesized template (default: the one under infra/cdk.out with a database)")
	flag.StringVar(&o.Snapshot, "snapshot", "", "restore from this cluster snapshot (name or ARN)")
	flag.StringVar(&o.Time, "time", "", "restore the cluster as it was at this time (RFC 3339, inside the backup window)")
	flag.StringVar(&o.OldBucket, "old-bucket", "", "after make destroy: the retained media bucket to copy blobs from")
	flag.StringVar(&o.CDKArgs, "cdk-args", os.Getenv("CDK_ARGS"), "the -c of the stack's deploy (CDK_ARGS)")
	run := flag.Bool("run", false, "run the steps (default: print them)")
	local := flag.Bool("local", false, "the data steps on the local Postgres (DATABASE_URL)")
	flag.Parse()
	ctx := context.Background()
	var err error
	if *local {
		err = runLocal(ctx, os.Stdout)
	} else {
		err = restore(ctx, os.Stdout, *tpl, o, *run)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "restore:", err)
		os.Exit(1)
	}
}

// findTemplate is the template under dir that holds a database cluster.
func findTemplate(dir string) (string, error) {
	all, _ := filepath.Glob(filepath.Join(dir, "*.template.json"))
	sort.Strings(all)
	for _, p := range all {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(`"AWS::RDS::DBCluster"`)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no template with a database under %s: run make synth with the stack's CDK_ARGS first", dir)
}

func restore(ctx context.Context, w io.Writer, tpl string, o runbook.Options, run bool) error {
	if tpl == "" {
		var err error
		if tpl, err = findTemplate("infra/cdk.out"); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(tpl)
	if err != nil {
		return err
	}
	st, err := runbook.Check(b)
	if err != nil {
		return fmt.Errorf("%s: %w", tpl, err)
	}
	o.Stack = strings.TrimSuffix(filepath.Base(tpl), ".template.json")
	o.Now = time.Now()
	steps, err := runbook.Steps(st, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s: the template restores through the stack (cluster %s, DeletionPolicy %s)\n", o.Stack, st.Cluster, st.Policy)
	fmt.Fprintf(w, "# keep %s set afterwards: later make deploy reuses it; clearing it replaces the database with an empty one\n", runbook.Parameter)
	vars := map[string]string{}
	for i, s := range steps {
		fmt.Fprintf(w, "\n# %d. %s\n%s\n", i+1, s.Say, s.Shell())
		if !run {
			continue
		}
		if err := runStep(ctx, w, s, vars); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, s.Say, err)
		}
	}
	if !run {
		fmt.Fprintln(w, "\n# nothing was run: add -run (make restore RESTORE_ARGS='... -run')")
	}
	return nil
}

var varRE = regexp.MustCompile(`\$\{([A-Z]+)\}`)

func runStep(ctx context.Context, w io.Writer, s runbook.Step, vars map[string]string) error {
	args := make([]string, len(s.Cmd))
	for i, a := range s.Cmd {
		args[i] = varRE.ReplaceAllStringFunc(a, func(m string) string { return vars[m[2:len(m)-1]] })
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if s.Set == "" && s.Want == "" {
		cmd.Stdin, cmd.Stdout = os.Stdin, w // make deploy may ask for the alarm address
		return cmd.Run()
	}
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	got := strings.TrimSpace(string(out))
	if s.Want != "" {
		if ok, _ := path.Match(s.Want, got); !ok {
			return fmt.Errorf("%q, want %s", got, s.Want)
		}
	}
	if s.Set != "" {
		if got == "" || got == "None" {
			return fmt.Errorf("no %s", s.Set)
		}
		vars[s.Set] = got
	}
	fmt.Fprintf(w, "  -> %s\n", got)
	return nil
}

func runLocal(ctx context.Context, w io.Writer) error {
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		return fmt.Errorf("DATABASE_URL is not set (source localdev/pg.sh)")
	}
	dir, err := os.MkdirTemp("", "buzz-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	l := Local{AdminDSN: dsn, DSN: dsn, Dir: dir, Name: "restored_" + time.Now().UTC().Format("20060102150405"),
		Migrate: func(ctx context.Context, dsn string) error { _, err := migrate.Run(ctx, dsn, log); return err }}
	r, err := l.Run(ctx)
	if err != nil {
		return err
	}
	j, _ := json.Marshal(r.Tables)
	fmt.Fprintf(w, "restored: every table's rows and each community's relay key equal the original's\nrows: %s\nDATABASE_URL=%s make dev   # serves the copy\n", j, r.CopyDSN)
	return nil
}
