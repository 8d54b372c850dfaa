// Command retained prints what deleting a stack leaves behind, read from
// its synthesized template (CloudFormation's DeletionPolicy): each
// resource, why it stays, what it costs a month (list prices of
// localdev/cost/model) and the command that removes it. `make destroy`
// runs it after `cdk destroy`.
//
//	go run ./localdev/retained -template infra/cdk.out/BuzzRelay-default.template.json [-gb 1] [-media-gb 0]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/buzzrelay/relay/localdev/cost/model"
)

func main() {
	tpl := flag.String("template", "", "the stack's synthesized template (infra/cdk.out/<stack>.template.json)")
	gb := flag.Float64("gb", 1, "GB of data in the database (its snapshot or the retained cluster)")
	mediaGB := flag.Float64("media-gb", 0, "GB of media in the bucket")
	flag.Parse()
	if err := run(*tpl, model.Sizes{DatabaseGB: *gb, MediaGB: *mediaGB}); err != nil {
		fmt.Fprintln(os.Stderr, "retained:", err)
		os.Exit(1)
	}
}

func run(path string, z model.Sizes) error {
	if path == "" {
		return fmt.Errorf("-template is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	stack := strings.TrimSuffix(filepath.Base(path), ".template.json")
	kept, err := model.Retained(b, stack, z, model.USEast1)
	if err != nil {
		return err
	}
	if len(kept) == 0 {
		fmt.Printf("%s: nothing is retained; deleting the stack deleted everything.\n", stack)
		return nil
	}
	var total float64
	fmt.Printf("%s: deleting the stack leaves (at %.0f GB of data, %.0f GB of media):\n", stack, z.DatabaseGB, z.MediaGB)
	for _, k := range kept {
		total += k.MonthlyUSD
		fmt.Printf("\n- %s (%s): %s\n  $%.2f/month\n", k.LogicalID, k.Type, k.What, k.MonthlyUSD)
		if k.Remove != "" {
			fmt.Printf("  remove: %s\n", k.Remove)
		}
	}
	fmt.Printf("\nretained total: $%.2f/month until removed\n", total)
	return nil
}
