package lineage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/sql"
)

// Publication format identifiers (docs/lineage.md). A reader refuses a
// version it does not know.
const (
	PublicationFormat        = "perfwh.publication"
	PublicationFormatVersion = 1
	publicationsPrefix       = "publications/sha256/"
)

// Publication is the immutable record of one published query result.
type Publication struct {
	Format        string            `json:"format"`
	FormatVersion int               `json:"format_version"`
	PublishedAt   time.Time         `json:"published_at"`
	PublishedBy   string            `json:"published_by"`
	Producer      evidence.Producer `json:"producer"`
	Query         PublishedQuery    `json:"query"`
	Params        map[string]any    `json:"params"`
	Warehouse     PublishedSource   `json:"warehouse"`
	Store         string            `json:"store"`
	Columns       []string          `json:"columns"`
	ColumnTypes   []string          `json:"column_types"` // Int64, Float64, String, DateTime or Null (every value NULL)
	Rows          [][]any           `json:"rows"`
	RowRuns       [][]string        `json:"row_runs"` // the run ids each row was computed from
	Runs          []PublishedRun    `json:"runs"`     // every contributing run, by run id
	Gates         GateReport        `json:"gates"`
	// Unsafe is set when a gate failed and the publication was made
	// anyway (--allow-unsafe). Lineage of an unsafe publication exits 4.
	Unsafe bool `json:"unsafe"`
}

// PublishedQuery is the registered query as it was when published.
type PublishedQuery struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Owner       string          `json:"owner"`
	Source      string          `json:"source"`
	Digest      evidence.Digest `json:"query_spec_digest"`
	Text        string          `json:"text"` // the whole file; re-parsing it gives Digest
}

// PublishedSource says where the rows were read and with which statements.
type PublishedSource struct {
	Dialect  string `json:"dialect"`
	Location string `json:"location"`
	SQL      string `json:"sql"`                // the statement as run: placeholders rendered
	RunsSQL  string `json:"runs_sql,omitempty"` // the run-set statement as run
}

// PublishedRun is a contributing run and the evidence it was published
// from.
type PublishedRun struct {
	RunID              string          `json:"run_id"`
	ManifestDigest     evidence.Digest `json:"artifact_manifest_digest"`
	WorkloadSpecDigest string          `json:"workload_spec_digest"`
	Benchmark          string          `json:"benchmark"`
}

// Run returns the contributing run id, or false.
func (p *Publication) Run(id string) (PublishedRun, bool) {
	i, ok := slices.BinarySearchFunc(p.Runs, id, func(r PublishedRun, id string) int { return strings.Compare(r.RunID, id) })
	if !ok {
		return PublishedRun{}, false
	}
	return p.Runs[i], true
}

// Column returns the index of a result column, or -1.
func (p *Publication) Column(name string) int { return slices.Index(p.Columns, name) }

// Encode returns the canonical JSON of p and its digest, the publication id.
func (p *Publication) Encode() ([]byte, evidence.Digest, error) {
	p.PublishedAt = p.PublishedAt.UTC()
	b, err := canonjson.Marshal(p)
	if err != nil {
		return nil, evidence.Digest{}, fmt.Errorf("encode publication: %w", err)
	}
	return b, evidence.Sum(b), nil
}

// DecodePublication parses a publication, checks its format and restores
// the rows' value types from ColumnTypes.
func DecodePublication(b []byte) (*Publication, error) {
	var p Publication
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decode publication: %w", err)
	}
	if p.Format != PublicationFormat {
		return nil, fmt.Errorf("decode publication: format %q, want %q", p.Format, PublicationFormat)
	}
	if p.FormatVersion < 1 || p.FormatVersion > PublicationFormatVersion {
		return nil, fmt.Errorf("decode publication: format_version %d not supported (this perfwh reads 1..%d)", p.FormatVersion, PublicationFormatVersion)
	}
	if len(p.ColumnTypes) != len(p.Columns) || len(p.RowRuns) != len(p.Rows) {
		return nil, fmt.Errorf("decode publication: %d columns with %d types, %d rows with %d run lists",
			len(p.Columns), len(p.ColumnTypes), len(p.Rows), len(p.RowRuns))
	}
	for i, row := range p.Rows {
		if len(row) != len(p.Columns) {
			return nil, fmt.Errorf("decode publication: row %d has %d values for %d columns", i+1, len(row), len(p.Columns))
		}
		for j, v := range row {
			tv, err := typed(v, p.ColumnTypes[j])
			if err != nil {
				return nil, fmt.Errorf("decode publication: row %d column %s: %w", i+1, p.Columns[j], err)
			}
			row[j] = tv
		}
	}
	for k, v := range p.Params {
		if n, ok := v.(json.Number); ok {
			p.Params[k] = numberValue(n)
		}
	}
	return &p, nil
}

func numberValue(n json.Number) any {
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// typed converts a decoded JSON value to the column type's Go value.
func typed(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "Int64":
		if n, ok := v.(json.Number); ok {
			return n.Int64()
		}
	case "Float64":
		if n, ok := v.(json.Number); ok {
			return n.Float64()
		}
	case "String":
		if s, ok := v.(string); ok {
			return s, nil
		}
	case "DateTime":
		if s, ok := v.(string); ok {
			return time.Parse(time.RFC3339Nano, s)
		}
	}
	return nil, fmt.Errorf("value %v is not a %s", v, typ)
}

// columnTypes names the type of each column of normalised rows (see
// warehouse.Result) and returns the rows as they are published: times as
// RFC 3339 strings, NaN and infinities as NULL.
func columnTypes(cols []string, rows [][]any) ([]string, [][]any, error) {
	types := make([]string, len(cols))
	for j := range types {
		types[j] = "Null"
	}
	out := make([][]any, len(rows))
	for i, row := range rows {
		out[i] = make([]any, len(row))
		for j, v := range row {
			var t string
			switch x := v.(type) {
			case nil:
				continue
			case int64:
				t = "Int64"
			case float64:
				t = "Float64"
				if math.IsNaN(x) || math.IsInf(x, 0) {
					v = nil
				}
			case string:
				t = "String"
			case time.Time:
				t, v = "DateTime", x.UTC().Format(time.RFC3339Nano)
			default:
				return nil, nil, fmt.Errorf("column %s: cannot publish a %T value", cols[j], v)
			}
			out[i][j] = v
			if types[j] != "Null" && types[j] != t {
				return nil, nil, fmt.Errorf("column %s mixes %s and %s values", cols[j], types[j], t)
			}
			types[j] = t
		}
	}
	return types, out, nil
}

// ObjectName is where publication d is stored.
func ObjectName(d evidence.Digest) string { return publicationsPrefix + d.Hex() }

// Put stores p write-once under the digest of its canonical JSON and
// returns that digest, its id.
func Put(ctx context.Context, be evidence.Backend, p *Publication) (evidence.Digest, error) {
	b, d, err := p.Encode()
	if err != nil {
		return d, err
	}
	err = be.Create(ctx, ObjectName(d), bytes.NewReader(b), int64(len(b)))
	if err != nil && !errors.Is(err, evidence.ErrExists) {
		return d, fmt.Errorf("store publication %s: %w", d, err)
	}
	return d, nil
}

// Get reads publication d and verifies that its content hashes to d: an
// error wrapping evidence.ErrNotFound when it is missing, a
// *evidence.DigestMismatchError when it was altered.
func Get(ctx context.Context, be evidence.Backend, d evidence.Digest) (*Publication, error) {
	rc, err := be.Open(ctx, ObjectName(d))
	if err != nil {
		return nil, fmt.Errorf("publication %s: %w", d, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(evidence.NewVerifyingReader(rc, d, be.URI(ObjectName(d))))
	if err != nil {
		return nil, fmt.Errorf("publication %s: %w", d, err)
	}
	p, err := DecodePublication(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", be.URI(ObjectName(d)), err)
	}
	return p, nil
}

// ResolveID finds the publication whose id (hex digest, with or without
// "sha256:") starts with prefix.
func ResolveID(ctx context.Context, be evidence.Backend, prefix string) (evidence.Digest, error) {
	h := strings.TrimPrefix(prefix, "sha256:")
	if len(h) < 4 || strings.Trim(strings.ToLower(h), "0123456789abcdef") != "" || len(h) > 64 {
		return evidence.Digest{}, fmt.Errorf("%q is not a publication id (hex digits of its sha256, at least 4)", prefix)
	}
	h = strings.ToLower(h)
	var found []string
	err := be.List(ctx, publicationsPrefix+h, func(oi evidence.ObjectInfo) error {
		found = append(found, strings.TrimPrefix(oi.Name, publicationsPrefix))
		return nil
	})
	if err != nil {
		return evidence.Digest{}, fmt.Errorf("list publications: %w", err)
	}
	switch len(found) {
	case 0:
		return evidence.Digest{}, fmt.Errorf("no publication %s in %s: %w", h, be.URI(publicationsPrefix), evidence.ErrNotFound)
	case 1:
		return evidence.ParseDigest(found[0])
	}
	return evidence.Digest{}, fmt.Errorf("publication id prefix %s is ambiguous: %d publications match (%s, ...)", h, len(found), found[0][:12])
}

// Listed is one publication in a listing.
type Listed struct {
	ID          evidence.Digest `json:"id"`
	PublishedAt time.Time       `json:"published_at"`
	PublishedBy string          `json:"published_by"`
	Query       string          `json:"query"`
	Rows        int             `json:"rows"`
	Runs        int             `json:"runs"`
	Unsafe      bool            `json:"unsafe"`
	Error       string          `json:"error,omitempty"` // unreadable or altered
}

// List reads every publication in the store, oldest first.
func List(ctx context.Context, be evidence.Backend) ([]Listed, error) {
	var ids []evidence.Digest
	err := be.List(ctx, publicationsPrefix, func(oi evidence.ObjectInfo) error {
		d, err := evidence.ParseDigest(strings.TrimPrefix(oi.Name, publicationsPrefix))
		if err == nil {
			ids = append(ids, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list publications: %w", err)
	}
	out := make([]Listed, 0, len(ids))
	for _, d := range ids {
		p, err := Get(ctx, be, d)
		if err != nil {
			out = append(out, Listed{ID: d, Error: err.Error()})
			continue
		}
		out = append(out, Listed{ID: d, PublishedAt: p.PublishedAt, PublishedBy: p.PublishedBy, Query: p.Query.Name,
			Rows: len(p.Rows), Runs: len(p.Runs), Unsafe: p.Unsafe})
	}
	slices.SortStableFunc(out, func(a, b Listed) int { return a.PublishedAt.Compare(b.PublishedAt) })
	return out, nil
}

// queryOf re-parses the query text stored in a publication.
func queryOf(p *Publication) (*sql.Query, error) {
	return sql.Parse(p.Query.Source, []byte(p.Query.Text))
}
