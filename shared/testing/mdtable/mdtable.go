// Package mdtable reads the first Markdown table under a heading of a
// document, so tests can hold a document's table equal to the code's
// (docs/reference.md's kinds and limits tables).
package mdtable

import (
	"fmt"
	"os"
	"strings"
)

// Read returns the header and the rows of the first table in the section of
// file headed by heading (a whole line such as "## Event kinds"), each cell
// trimmed. The section ends at the next heading of the same or a higher level.
func Read(file, heading string) (header []string, rows [][]string, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("mdtable: %w", err)
	}
	level := heading[:strings.IndexByte(heading+" ", ' ')+1]
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		return nil, nil, fmt.Errorf("mdtable: %s has no %q section", file, heading)
	}
	section, _, _ = strings.Cut(section, "\n"+level)
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
		case strings.HasPrefix(cells[0], "---"):
		default:
			rows = append(rows, cells)
		}
	}
	if header == nil {
		return nil, nil, fmt.Errorf("mdtable: the %q section of %s has no table", heading, file)
	}
	return header, rows, nil
}
