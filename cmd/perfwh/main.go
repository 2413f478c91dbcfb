// Command perfwh is the performance warehouse CLI. See the README and
// docs/cli.md; all behaviour lives in internal/cli and the packages it uses.
package main

import (
	"os"

	"github.com/perfwh/perfwh/internal/cli"
)

func main() { os.Exit(cli.Main()) }
