// Command relaykey creates (or rotates) the relay's secp256k1 key for the KMS
// signer: it generates a 32-byte secret, encrypts it with KMS under the given
// symmetric key and the encryption context {"community": COMMUNITY}, checks
// that the ciphertext decrypts back to the same public key, optionally stores
// the base64 ciphertext in an SSM parameter, and prints the public key. The
// plaintext secret is never written anywhere.
//
//	go run ./localdev/relaykey -kms-key alias/BuzzRelay-default/relay-key \
//	    -community default -ssm-parameter /buzz/default/relay-key
//
// It uses the standard AWS configuration (profile, region, credentials);
// AWS_ENDPOINT_URL_KMS=http://127.0.0.1:4599 points it at local-kms.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/aws/ssmparam"
)

// Result is what the command prints (one JSON object on stdout).
type Result struct {
	PubKey       string `json:"pubkey"`
	Community    string `json:"community"`
	KMSKey       string `json:"kms_key"`
	Ciphertext   string `json:"ciphertext"`
	SSMParameter string `json:"ssm_parameter,omitempty"`
	SSMVersion   int64  `json:"ssm_version,omitempty"`
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		log.Error("relaykey failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("relaykey", flag.ContinueOnError)
	community := getenv("BUZZ_COMMUNITY")
	if community == "" {
		community = "default"
	}
	var (
		keyID     = fs.String("kms-key", getenv("RELAY_KMS_KEY_ID"), "symmetric KMS key (id, ARN or alias/NAME) that encrypts the relay key")
		comm      = fs.String("community", community, "community named in the encryption context (the relay's BUZZ_COMMUNITY)")
		param     = fs.String("ssm-parameter", "", "store the base64 ciphertext in this SSM parameter (String); empty: only print it")
		overwrite = fs.Bool("overwrite", false, "replace an existing SSM parameter value (key rotation: the relay gets a new identity)")
		fromStdin = fs.Bool("secret-stdin", false, "encrypt an existing 64-hex secret read from stdin instead of generating one (moving a relay identity into KMS)")
		verify    = fs.Bool("verify", true, "decrypt the ciphertext once to check it (needs kms:Decrypt for the caller)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *keyID == "" {
		return errors.New("-kms-key is required (or RELAY_KMS_KEY_ID)")
	}
	if *comm == "" {
		return errors.New("-community must not be empty")
	}

	var secret []byte
	var err error
	if *fromStdin {
		line, rerr := bufio.NewReader(stdin).ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("read secret from stdin: %w", rerr)
		}
		secret, err = hex.DecodeString(strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("secret on stdin is not hex: %w", err)
		}
	} else if secret, err = kmssigner.NewSecret(); err != nil {
		return err
	}
	defer clear(secret)
	pub, err := kmssigner.PublicKey(secret)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load AWS configuration: %w", err)
	}
	client := kmssigner.NewClient(awsCfg)
	ct, err := kmssigner.Seal(ctx, client, *keyID, *comm, secret)
	if err != nil {
		return err
	}
	if *verify {
		k, err := kmssigner.Load(ctx, client, ct, "", *comm)
		if err != nil {
			return fmt.Errorf("verify ciphertext: %w", err)
		}
		if k.PublicKey() != pub {
			return errors.New("verify ciphertext: decrypted key has another public key")
		}
	}
	res := Result{PubKey: pub, Community: *comm, KMSKey: *keyID, Ciphertext: kmssigner.EncodeCiphertext(ct)}
	if *param != "" {
		v, err := ssmparam.Put(ctx, ssmparam.NewClient(awsCfg), *param, res.Ciphertext,
			"buzz relay key (KMS ciphertext, base64) for community "+*comm+", pubkey "+pub, *overwrite)
		if err != nil {
			return err
		}
		res.SSMParameter, res.SSMVersion = *param, v
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fmt.Errorf("print result: %w", err)
	}
	return nil
}
