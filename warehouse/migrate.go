package warehouse

// Migration is one versioned schema change. Statements returns the
// statements for a dialect; engines run them in order and then record the
// version in schema_migrations. Migrations are append-only: a released
// migration is never edited, a change is a new one.
type Migration struct {
	Version     int
	Description string
	Statements  func(o DDLOptions) ([]string, error)
}

// Migrations bring an empty warehouse to SchemaVersion.
var Migrations = []Migration{
	{
		Version:     1,
		Description: "create the perfwh tables",
		Statements:  func(o DDLOptions) ([]string, error) { return Render(Tables, o) },
	},
}

// Pending returns the migrations above version, in order.
func Pending(version int) []Migration {
	var out []Migration
	for _, m := range Migrations {
		if m.Version > version {
			out = append(out, m)
		}
	}
	return out
}
