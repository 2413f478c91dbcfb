package clickhouse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/perfwh/perfwh/internal/buildinfo"
	"github.com/perfwh/perfwh/warehouse"
)

// DefaultPasswordEnv is the environment variable holding the password when
// the URL names none with password_env.
const DefaultPasswordEnv = "PERFWH_CLICKHOUSE_PASSWORD"

// DefaultDatabase is the database used when the URL has no path.
const DefaultDatabase = "perfwh"

// MinVersion is the oldest server perfwh supports: Debian's 18.16. Every
// statement perfwh issues works there; newer-only features sit behind
// Version.AtLeast.
var MinVersion = Version{18, 16, 0}

// Version is a ClickHouse server version.
type Version struct{ Major, Minor, Patch int }

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool {
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor > o.Minor
	}
	return v.Patch >= o.Patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Config is a parsed clickhouse:// URL.
type Config struct {
	Addr        string // host:port
	Database    string
	Username    string
	PasswordEnv string // environment variable holding the password
	Cluster     string // renders ON CLUSTER DDL and writes through Distributed tables
	Secure      bool   // TLS
	Compress    bool   // LZ4 on the wire
}

// Location is the URL without credentials, for Status and messages.
func (c Config) Location() string {
	u := url.URL{Scheme: "clickhouse", Host: c.Addr, Path: "/" + c.Database}
	if c.Cluster != "" {
		u.RawQuery = "cluster=" + c.Cluster
	}
	return u.String()
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseURL parses clickhouse://host[:9000][/db][?options]. Options:
// username, password_env (the name of the environment variable holding the
// password; default PERFWH_CLICKHOUSE_PASSWORD), cluster, secure=true,
// compress=lz4. A password in the URL is refused: credentials come only
// from the environment.
func ParseURL(rawURL string) (Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("clickhouse URL: %w", err)
	}
	if u.Scheme != "clickhouse" {
		return Config{}, fmt.Errorf("clickhouse URL: scheme %q, want clickhouse://host:9000/db", u.Scheme)
	}
	if u.Host == "" {
		return Config{}, errors.New("clickhouse URL: no host: want clickhouse://host:9000/db")
	}
	c := Config{Addr: u.Host, Database: strings.Trim(u.Path, "/"), Username: "default", PasswordEnv: DefaultPasswordEnv}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return Config{}, fmt.Errorf("clickhouse URL: a password in the URL is refused; put it in $%s (or name another variable with ?password_env=)", DefaultPasswordEnv)
		}
		c.Username = u.User.Username()
	}
	if u.Port() == "" {
		c.Addr = net.JoinHostPort(u.Hostname(), "9000")
	}
	if c.Database == "" {
		c.Database = DefaultDatabase
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "username", "user":
			c.Username = v
		case "password_env":
			c.PasswordEnv = v
		case "cluster":
			c.Cluster = v
		case "secure":
			if c.Secure, err = strconv.ParseBool(v); err != nil {
				return Config{}, fmt.Errorf("clickhouse URL: secure=%q: want true or false", v)
			}
		case "compress":
			switch v {
			case "lz4":
				c.Compress = true
			case "", "none", "false":
			default:
				return Config{}, fmt.Errorf("clickhouse URL: compress=%q: want lz4 or none", v)
			}
		case "password":
			return Config{}, fmt.Errorf("clickhouse URL: password= is refused; put the password in $%s (or name another variable with ?password_env=)", DefaultPasswordEnv)
		default:
			return Config{}, fmt.Errorf("clickhouse URL: unknown option %q (known: username, password_env, cluster, secure, compress)", k)
		}
	}
	if !ident.MatchString(c.Database) {
		return Config{}, fmt.Errorf("clickhouse URL: database %q is not a plain identifier", c.Database)
	}
	if c.Cluster != "" && !ident.MatchString(c.Cluster) {
		return Config{}, fmt.Errorf("clickhouse URL: cluster %q is not a plain identifier", c.Cluster)
	}
	return c, nil
}

// Warehouse is a ClickHouse warehouse. It is safe for concurrent use.
type Warehouse struct {
	cfg     Config
	opts    ch.Options
	conn    driver.Conn // no default database: perfwh's own statements name it
	version Version
	display string // server's version string, as it reports it

	qmu   sync.Mutex
	qconn driver.Conn // default database cfg.Database, for Query's unqualified names
}

var _ warehouse.Warehouse = (*Warehouse)(nil)

// Open connects to the server named by rawURL (see ParseURL) and checks
// its version. It creates nothing: Migrate does.
func Open(ctx context.Context, rawURL string) (*Warehouse, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	opts := ch.Options{
		Protocol:        ch.Native,
		Addr:            []string{cfg.Addr},
		Auth:            ch.Auth{Username: cfg.Username, Password: os.Getenv(cfg.PasswordEnv)},
		DialTimeout:     10 * time.Second,
		MaxOpenConns:    8,
		MaxIdleConns:    4,
		ConnMaxLifetime: time.Hour,
		ClientInfo:      ch.ClientInfo{Products: []struct{ Name, Version string }{{"perfwh", buildinfo.Version()}}},
	}
	if cfg.Secure {
		opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.Compress {
		opts.Compression = &ch.Compression{Method: ch.CompressionLZ4}
	}
	conn, err := ch.Open(&opts)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.Location(), err)
	}
	w := &Warehouse{cfg: cfg, opts: opts, conn: conn}
	if err := w.checkVersion(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

func (w *Warehouse) checkVersion(ctx context.Context) error {
	var v string
	if err := w.conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return fmt.Errorf("connect to ClickHouse at %s: %w", w.cfg.Location(), err)
	}
	ver, err := parseVersion(v)
	if err != nil {
		return fmt.Errorf("ClickHouse at %s: %w", w.cfg.Location(), err)
	}
	if !ver.AtLeast(MinVersion) {
		return fmt.Errorf("ClickHouse at %s is %s; perfwh needs %s or newer", w.cfg.Location(), v, MinVersion)
	}
	w.version, w.display = ver, v
	return nil
}

func parseVersion(s string) (Version, error) {
	var v Version
	parts := strings.SplitN(s, ".", 4)
	if len(parts) < 2 {
		return v, fmt.Errorf("unparseable server version %q", s)
	}
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return v, fmt.Errorf("unparseable server version %q", s)
		}
		*dst[i] = n
	}
	return v, nil
}

// ServerVersion returns the server's version, as checked by Open.
func (w *Warehouse) ServerVersion() Version { return w.version }

// Config returns the parsed URL.
func (w *Warehouse) Config() Config { return w.cfg }

// Dialect returns warehouse.ClickHouse.
func (w *Warehouse) Dialect() string { return warehouse.ClickHouse }

// Close releases the connections.
func (w *Warehouse) Close() error {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	var errs []error
	if w.qconn != nil {
		errs = append(errs, w.qconn.Close())
		w.qconn = nil
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}

// queryConn returns the pool whose default database is the warehouse's,
// opening it on first use (the database may not exist before Migrate).
func (w *Warehouse) queryConn() (driver.Conn, error) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if w.qconn != nil {
		return w.qconn, nil
	}
	o := w.opts
	o.Auth.Database = w.cfg.Database
	c, err := ch.Open(&o)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", w.cfg.Location(), err)
	}
	w.qconn = c
	return c, nil
}

// name returns the table perfwh reads and inserts into: db.t (through the
// Distributed table on a cluster).
func (w *Warehouse) name(t string) string { return w.cfg.Database + "." + t }

// local returns the table that holds the rows and the ON CLUSTER clause
// that ALTER and OPTIMIZE need: db.t on one node, db.t_local ON CLUSTER c
// on a cluster.
func (w *Warehouse) local(t string) string {
	if w.cfg.Cluster == "" {
		return w.cfg.Database + "." + t
	}
	return w.cfg.Database + "." + t + "_local ON CLUSTER " + w.cfg.Cluster
}

// Status reports the schema version and every table's row count. Counts
// are exact: SELECT count() FROM t FINAL, so rows that a rewrite replaced
// and background merges have not yet collapsed count once.
func (w *Warehouse) Status(ctx context.Context) (warehouse.Status, error) {
	st := warehouse.Status{
		Dialect: warehouse.ClickHouse, Location: w.cfg.Location(),
		Latest: warehouse.SchemaVersion, ServerVersion: w.display,
		Tables: []warehouse.TableStatus{},
	}
	existing, err := w.tables(ctx)
	if err != nil {
		return st, err
	}
	if existing["schema_migrations"] {
		if st.SchemaVersion, err = w.schemaVersion(ctx); err != nil {
			return st, err
		}
	}
	for _, t := range warehouse.Tables {
		if !existing[t.Name] {
			continue
		}
		n, err := w.count(ctx, "SELECT count() FROM "+w.name(t.Name)+" FINAL")
		if err != nil {
			return st, fmt.Errorf("status: count %s: %w", t.Name, err)
		}
		st.Tables = append(st.Tables, warehouse.TableStatus{Name: t.Name, Rows: n})
	}
	return st, nil
}

// tables returns the names of the tables in the warehouse's database.
func (w *Warehouse) tables(ctx context.Context) (map[string]bool, error) {
	rows, err := w.conn.Query(ctx, "SELECT name FROM system.tables WHERE database = ?", w.cfg.Database)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", w.cfg.Database, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list tables of %s: %w", w.cfg.Database, err)
		}
		out[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", w.cfg.Database, err)
	}
	return out, nil
}

// count runs a query returning one count() and returns it as int64.
func (w *Warehouse) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n uint64
	if err := w.conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0, err
	}
	return int64(n), nil
}
