package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
)

// Cluster is a PostgreSQL server of one test's own (PrivateCluster), for
// the tests that stop or crash the server: the shared one of `make test`
// serves every other test at the same time.
type Cluster struct {
	// DSN is the migrated database "buzz" on it.
	DSN  string
	t    testing.TB
	bin  string
	data string
	port int
	as   []string // runuser -u postgres -- when root: initdb refuses root
}

// PrivateCluster initialises and starts a server on a free loopback port
// (Debian's PostgreSQL binaries, as localdev/pg.sh finds them), creates the
// database buzz with every migration applied, and stops and deletes it all
// when the test ends.
func PrivateCluster(t testing.TB) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: pgBinDir(t)}
	dir, err := os.MkdirTemp("", "buzz-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.data = filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root without a postgres user to own a private cluster: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	c.run("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.Start()
	t.Cleanup(func() { c.Stop("immediate") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	if c.DSN, err = dbtest.CreateDatabase(ctx, admin, "buzz", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Run(ctx, c.DSN, Quiet()); err != nil {
		t.Fatal(err)
	}
	return c
}

// Start starts the server and waits until it takes connections.
func (c *Cluster) Start() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data, "-l", c.data+".log", "-w", "-t", "60", "-o",
		fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=''", c.port), "start")
}

// Stop stops the server: mode "immediate" is a crash (no checkpoint, what
// was not flushed to the WAL is gone), "fast" a clean shutdown.
func (c *Cluster) Stop(mode string) {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data, "-m", mode, "-w", "stop")
}

func (c *Cluster) run(tool string, args ...string) {
	c.t.Helper()
	argv := append(append([]string{}, c.as...), append([]string{filepath.Join(c.bin, tool)}, args...)...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s: %v: %s", tool, err, out)
	}
}

// pgBinDir is the folder of pg_ctl: Debian's newest, else the one on PATH.
func pgBinDir(t testing.TB) string {
	t.Helper()
	for _, v := range []string{"17", "16", "15", "14"} {
		d := "/usr/lib/postgresql/" + v + "/bin"
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	p, err := exec.LookPath("pg_ctl")
	if err != nil {
		t.Fatal("no PostgreSQL server binaries (pg_ctl): make test installs Debian's postgresql")
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(p)
}
