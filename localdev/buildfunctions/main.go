// Command buildfunctions builds every function of shared/wiring/lambdas for
// this machine, with the flags `make build` uses, into one folder (-o), once
// for all of make test's suites (localdev/suites.sh exports the folder as
// BUZZ_FUNCTIONS_BIN, and emulator.BuildFunctions links from it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

func main() {
	out := flag.String("o", "", "the folder to build into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "buildfunctions: -o is required")
		os.Exit(2)
	}
	names := make([]string, 0, len(lambdas.Functions))
	for _, f := range lambdas.Functions {
		names = append(names, f.Name)
	}
	// Build, never link: the folder is the one the others link from.
	os.Unsetenv(emulator.PrebuiltEnv)
	if err := emulator.BuildFunctions(context.Background(), *out, names...); err != nil {
		fmt.Fprintln(os.Stderr, "buildfunctions:", err)
		os.Exit(1)
	}
}
