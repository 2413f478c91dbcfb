// Package all imports every driver so that it registers itself.
package all

import (
	_ "github.com/perfwh/perfwh/drivers/fileio" // file I/O
)
