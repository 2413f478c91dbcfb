// Package dashboards will generate Grafana dashboards (with
// grafana-foundation-sdk) over the warehouse tables, each number linked to
// its lineage. Not implemented yet: see docs/design.md.
package dashboards
