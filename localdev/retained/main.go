// Command retained prints what deleting a stack leaves behind, read from
// its synthesized template (CloudFormation's DeletionPolicy): each
// resource, why it stays, what it costs a month (list prices of
// localdev/cost/model) and the command that removes it. `make destroy`
// runs it after `cdk destroy`.
//
//	go run ./localdev/retained -template infra/cdk.out/BuzzRelay-default.template.json [-gb 1] [-media-gb 0] [-logs-gb 0.01]
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
	logsGB := flag.Float64("logs-gb", 0.01, "GB in the log groups no template holds (custom-resource handlers, Lambda@Edge)")
	flag.Parse()
	if err := run(*tpl, model.Sizes{DatabaseGB: *gb, MediaGB: *mediaGB, LogsGB: *logsGB}); err != nil {
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
	for _, k := range kept {
		if k.Type == "AWS::RDS::DBCluster" {
			fmt.Printf("to bring the community back (from the final snapshot; a retained cluster: aws rds create-db-cluster-snapshot of it first): make restore CDK_ARGS='<this deploy's -c> -c relayKmsKey=<the KMS key's ARN>' RESTORE_ARGS='-snapshot <the snapshot> -old-bucket <the media bucket> -run' (docs/deploy.md, \"Backups and restore\")\n")
			break
		}
	}
	return nil
}
