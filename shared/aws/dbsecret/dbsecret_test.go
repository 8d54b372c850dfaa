package dbsecret

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestDSNParsesWithPgx(t *testing.T) {
	// The shape RDS writes for a cluster secret (port is a number).
	secret := `{"dbClusterIdentifier":"c","password":"p@ss:w/rd?&=%","dbname":"buzz","engine":"postgres",
		"port":5432,"host":"c.cluster-x.eu-west-2.rds.amazonaws.com","username":"buzz"}`
	dsn, err := DSN(secret, "require")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgx cannot parse %q: %v", dsn, err)
	}
	if cfg.Host != "c.cluster-x.eu-west-2.rds.amazonaws.com" || cfg.Port != 5432 || cfg.User != "buzz" ||
		cfg.Password != "p@ss:w/rd?&=%" || cfg.Database != "buzz" {
		t.Fatalf("parsed %+v", cfg)
	}
	if cfg.TLSConfig == nil {
		t.Fatal("sslmode=require must give a TLS config")
	}
}

func TestDSNDefaultsAndStringPort(t *testing.T) {
	dsn, err := DSN(`{"host":"h","port":"6543","username":"u","password":"p"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if dsn != "postgres://u:p@h:6543/postgres" {
		t.Fatalf("got %s", dsn)
	}
	dsn, err = DSN(`{"host":"h","username":"u","password":"p","dbname":"d"}`, "disable")
	if err != nil {
		t.Fatal(err)
	}
	if dsn != "postgres://u:p@h:5432/d?sslmode=disable" {
		t.Fatalf("got %s", dsn)
	}
}

func TestDSNRejects(t *testing.T) {
	for _, s := range []string{
		`not json`,
		`{"port":5432,"username":"u","password":"p"}`,
		`{"host":"h","password":"p"}`,
		`{"host":"h","username":"u"}`,
		`{"host":"h","username":"u","password":"p","port":70000}`,
		`{"host":"h","username":"u","password":"p","port":"x"}`,
	} {
		if _, err := DSN(s, "require"); err == nil {
			t.Errorf("accepted %s", s)
		}
	}
}

func TestResolveEmptyARN(t *testing.T) {
	if _, err := Resolve(context.Background(), nil, "", "require"); err == nil {
		t.Fatal("empty ARN accepted")
	}
}
