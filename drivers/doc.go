// Package drivers defines the Driver interface (an experiment with a
// parameter schema), its parameter types and the driver registry. Each
// driver lives in its own package (drivers/fileio, ...) and registers itself
// in init; the CLI imports them all through drivers/all.
package drivers
