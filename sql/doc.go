// Package sql will hold the generated DDL for each warehouse engine
// (golden-tested) and the registered queries under sql/queries. Not
// implemented yet: see docs/design.md.
package sql
