package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/spec"
)

// NewRootCmd builds the perfwh command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "perfwh",
		Short: "Performance warehouse for AI infrastructure",
		Long: `perfwh runs benchmark cases, keeps their raw evidence in content-addressed,
write-once storage, and walks every published number back to that evidence.`,
		Args:          noArgs,
		RunE:          helpRun,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			allowed := []string{OutputTable, OutputJSON}
			if cmd.Annotations["csv"] == "yes" {
				allowed = append(allowed, OutputCSV)
			}
			if !slices.Contains(allowed, f.Output) {
				return usageErrorf("--output must be %s, got %q", strings.Join(allowed, ", "), f.Output)
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w\nSee '%s --help'.", err, cmd.CommandPath()))
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&f.Output, "output", "o", OutputTable, "output format: table or json (json: one document on stdout)")
	pf.StringVar(&f.Home, "home", defaultHome(), "perfwh home directory (env "+EnvHome+")")
	pf.StringVar(&f.Store, "store", "", "evidence store URL: file:///path or s3://bucket/prefix?endpoint=URL (env "+EnvStore+"; default $PERFWH_HOME/store)")
	pf.StringVar(&f.WH, "warehouse", "", "warehouse URL: duckdb:///path or clickhouse://host:9000/db (env "+EnvWarehouse+"; default duckdb://$PERFWH_HOME/warehouse.duckdb)")
	pf.StringVar(&f.Level, "log-level", "info", "stderr log level: debug, info, warn, error")

	root.AddCommand(
		newVersionCmd(f),
		newPlanCmd(f),
		newRunCmd(f),
		newRunsCmd(f),
		newVerifyCmd(f),
		newIngestCmd(f),
		newSQLCmd(f),
		newWarehouseCmd(f),
		newQueryCmd(f), newPublishCmd(f), newPublicationsCmd(f), newLineageCmd(f),
	)
	return root
}

// Main runs perfwh with the process's arguments and returns its exit code.
func Main() int {
	f := &Factory{IO: SystemIO()}
	root := NewRootCmd(f)
	ctx, stop := interruptContext()
	defer stop()
	err := root.ExecuteContext(ctx)
	if err != nil {
		reportError(f, err)
	}
	return exitCode(err)
}

// interruptContext is cancelled by the first SIGINT or SIGTERM; a second
// one exits at once.
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		fmt.Fprintln(os.Stderr, "perfwh: interrupted; finishing cleanly (interrupt again to abort at once)")
		cancel()
		<-ch
		fmt.Fprintln(os.Stderr, "perfwh: aborted")
		os.Exit(ExitInterrupted)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// reportError prints err on stderr and, in json mode, as the one JSON
// document on stdout unless the command already wrote one.
func reportError(f *Factory, err error) {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return
	}
	fmt.Fprintf(f.IO.ErrOut, "perfwh: %v\n", err)
	if !f.JSON() {
		return
	}
	doc := map[string]any{"error": map[string]any{"message": err.Error(), "exit_code": exitCode(err)}}
	var se spec.Errors
	if errors.As(err, &se) {
		doc["error"].(map[string]any)["problems"] = se
	}
	_ = writeJSON(f.IO.Out, doc)
}

// helpRun shows help for a command that only groups subcommands; an
// unknown subcommand was already refused by noArgs.
func helpRun(cmd *cobra.Command, args []string) error { return cmd.Help() }
